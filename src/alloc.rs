/*!
Where parse trees get their memory, and handing it back.

A parse tree is millions of small allocations, freed whole a moment later. With glibc
their malloc and free were ~13 % of a search's samples (`perf`), in both ast-grep and
git-astedit. The binary gives tree-sitter's own allocations to mimalloc (Rust's stay
with the system allocator), with arena memory committed on use rather than up front.
On the benchmark corpora that made searches 8-10 % faster and lowered the rust
corpus's peak (185 -> 176 MB): mimalloc packs small objects without headers. Its v2
line is used: A/B against v3 (the -sys crate's default) it was another 5-7 % faster
on every search, at the same peaks.

After a large file, freed memory is handed back at once ([`release_freed_memory`]):
both allocators would otherwise keep it, and later work would pile up beside it.
*/

use std::ffi::c_void;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

static TREE_SITTER_ON_MIMALLOC: AtomicBool = AtomicBool::new(false);

/// `mi_option_arena_eager_commit` in the bundled mimalloc.h (v2 and v3 alike), which the -sys
/// crate does not name.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Makes tree-sitter allocate with mimalloc.
///
/// # Safety
///
/// Call it before anything in the process touches tree-sitter (first thing in
/// `main`): memory allocated by one allocator and freed by the other corrupts both.
pub unsafe fn give_tree_sitter_mimalloc() {
    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        // SAFETY: mimalloc's malloc has the C contract tree-sitter expects.
        unsafe { libmimalloc_sys::mi_malloc(size) }
    }
    unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        // SAFETY: as above.
        unsafe { libmimalloc_sys::mi_calloc(count, size) }
    }
    unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        // SAFETY: the caller of `give_tree_sitter_mimalloc` ensured that every pointer
        // tree-sitter holds came from mimalloc.
        unsafe { libmimalloc_sys::mi_realloc(ptr, size) }
    }
    unsafe extern "C" fn free(ptr: *mut c_void) {
        // SAFETY: as above.
        unsafe { libmimalloc_sys::mi_free(ptr) }
    }
    // SAFETY: options are set before mimalloc's first allocation; the allocator swap
    // is safe by this function's contract.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc,
            calloc,
            realloc,
            free,
        }));
    }
    TREE_SITTER_ON_MIMALLOC.store(true, Ordering::Relaxed);
}

/// Hands heap memory freed so far back to the OS: glibc's (all arenas) and, when
/// tree-sitter uses mimalloc, this thread's mimalloc pages and the purgeable arenas.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: malloc_trim only returns free pages to the OS; it has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
    if TREE_SITTER_ON_MIMALLOC.load(Ordering::Relaxed) {
        // SAFETY: mi_collect only frees pages with no live blocks.
        unsafe { libmimalloc_sys::mi_collect(true) };
    }
}
