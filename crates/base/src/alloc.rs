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

A search parses a file, reads its matches out as plain Rust data and throws the tree
away. Freeing a tree node by node (`ts_tree_delete`) walked every subtree of it: ~4 %
of the no-literal search's samples. A [`ParseArena`] gives the parse a mimalloc heap
of its own and frees the whole heap at once instead (see there for what that asks of
its user).
*/

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::null_mut;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

static TREE_SITTER_ON_MIMALLOC: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The heap of this thread's open [`ParseArena`], or null: where tree-sitter's
    /// allocations on this thread go.
    static ARENA_HEAP: Cell<*mut libmimalloc_sys::mi_heap_t> = const { Cell::new(null_mut()) };
}

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
    // Inside a `ParseArena`, allocations go to its heap (`mi_free` takes a block of
    // any heap, so `free` needs no such choice).
    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        let heap = ARENA_HEAP.get();
        // SAFETY: mimalloc's malloc has the C contract tree-sitter expects; a non-null
        // heap is this thread's open arena's, alive until the arena closes.
        unsafe {
            if heap.is_null() {
                libmimalloc_sys::mi_malloc(size)
            } else {
                libmimalloc_sys::mi_heap_malloc(heap, size)
            }
        }
    }
    unsafe extern "C" fn calloc(count: usize, size: usize) -> *mut c_void {
        let heap = ARENA_HEAP.get();
        // SAFETY: as above.
        unsafe {
            if heap.is_null() {
                libmimalloc_sys::mi_calloc(count, size)
            } else {
                libmimalloc_sys::mi_heap_calloc(heap, count, size)
            }
        }
    }
    unsafe extern "C" fn realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
        let heap = ARENA_HEAP.get();
        // SAFETY: the caller of `give_tree_sitter_mimalloc` ensured that every pointer
        // tree-sitter holds came from mimalloc. A block that moves inside an arena
        // moves into the arena's heap: `ParseArena`'s contract is that only objects
        // made inside the arena are touched there.
        unsafe {
            if heap.is_null() {
                libmimalloc_sys::mi_realloc(ptr, size)
            } else {
                libmimalloc_sys::mi_heap_realloc(heap, ptr, size)
            }
        }
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

/// A mimalloc heap that takes every tree-sitter allocation made on this thread while
/// it is open, and frees them all at once when it closes (`mi_heap_destroy`), without
/// visiting them one by one.
///
/// What lives in it dies with it, without its destructor running. So, while an arena
/// is open on a thread, tree-sitter may only be given objects made inside it: a fresh
/// `Parser` (a reused one holds pools and arrays that would grow into the arena and
/// later be freed under it), the trees it makes, their cursors. Each of them must be
/// dropped before the arena closes, or be forgotten (`mem::forget`) so that its
/// destructor never touches freed memory; nothing made inside may leave the scope.
/// [`ParseArena::pin`] makes dropping a tree cheap: a forgotten second reference to its
/// root keeps `ts_tree_delete` from walking it.
///
/// Without mimalloc for tree-sitter ([`give_tree_sitter_mimalloc`] not called, as in
/// the unit tests of other modules) an arena does nothing and everything is freed the
/// usual way. Not `Send`: the heap belongs to the thread that opened it.
pub struct ParseArena {
    heap: *mut libmimalloc_sys::mi_heap_t,
    /// The arena open before this one on this thread (null: none).
    outer: *mut libmimalloc_sys::mi_heap_t,
}

impl ParseArena {
    /// Opens an arena on this thread.
    ///
    /// # Safety
    ///
    /// Until the arena is dropped, tree-sitter objects made before it was opened must
    /// not be used on this thread (a reused parser, an older tree or cursor), and every
    /// tree-sitter object made while it is open must be dropped or forgotten before it
    /// is (see the type's documentation).
    pub unsafe fn open() -> ParseArena {
        let outer = ARENA_HEAP.get();
        let heap = if TREE_SITTER_ON_MIMALLOC.load(Ordering::Relaxed) {
            // SAFETY: mi_heap_new has no preconditions; null (out of memory) leaves
            // allocations on the default heap.
            unsafe { libmimalloc_sys::mi_heap_new() }
        } else {
            null_mut()
        };
        if !heap.is_null() {
            ARENA_HEAP.set(heap);
        }
        ParseArena { heap, outer }
    }

    /// Whether allocations really go to an arena (mimalloc serves tree-sitter).
    pub fn is_active(&self) -> bool {
        !self.heap.is_null()
    }

    /// Keeps `tree`'s nodes alive until the arena closes, so that dropping `tree` only
    /// frees its handle: its root gets a second reference that is never released.
    /// Without an active arena this does nothing (the tree is freed as usual).
    pub fn pin(&self, tree: &tree_sitter::Tree) {
        if self.is_active() {
            // The copy's handle and the reference it holds on the root live in the
            // arena, which frees them unvisited.
            std::mem::forget(tree.clone());
        }
    }
}

/// Whether a [`ParseArena`] is open (and active) on this thread: then every parse must
/// use a parser made inside it, never a shared one.
pub fn arena_is_open() -> bool {
    !ARENA_HEAP.get().is_null()
}

/// [`ParseArena::pin`] for code that does not hold the arena: pins `tree` when an
/// arena is open on this thread (the tree must have been made inside it).
pub fn pin_in_open_arena(tree: &tree_sitter::Tree) {
    if arena_is_open() {
        std::mem::forget(tree.clone());
    }
}

impl Drop for ParseArena {
    fn drop(&mut self) {
        if self.heap.is_null() {
            return;
        }
        ARENA_HEAP.set(self.outer);
        // SAFETY: the heap was made on this thread by `open` (the type is not `Send`),
        // and by `open`'s contract nothing still in use lives in it.
        unsafe { libmimalloc_sys::mi_heap_destroy(self.heap) };
    }
}
