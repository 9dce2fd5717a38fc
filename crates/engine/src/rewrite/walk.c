/*
 * The pre-order walk of a search, in C over tree-sitter's own subtrees.
 *
 * `find_all` walks a tree with a TreeCursor from Rust: three calls into tree-sitter
 * per node, each keeping the cursor's stack, and the node's kind asked for again: 15 %
 * of a search for `$F($$$A)` went there. This walks the same nodes in the same order
 * (tree-sitter's visible nodes, pre-order: hidden nodes are descended into, never
 * reported; an alias makes a node visible and renames it) and reports only those of
 * the kinds the pattern can match. Compiled against the tree-sitter sources of the
 * crate this is linked with (build.rs), whose inline helpers it uses as
 * `ts_tree_cursor_child_iterator_next` and `ts_node_symbol` do.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tree_sitter/api.h"
#include "language.h"
#include "length.h"
#include "subtree.h"
#include "tree.h"

typedef void (*astedit_visit)(void *context, TSNode node);

/* A node whose children are being walked. */
typedef struct {
  Subtree parent;
  /* The parent production's aliases, by structural child index (NULL: none). */
  const TSSymbol *aliases;
  /* Where the next child starts. */
  Length position;
  uint32_t child_index;
  uint32_t structural_index;
} Frame;

/*
 * Asks the memory for the data of the next few children of `frame` ahead of their
 * turn: most of a walk's time was spent waiting for each child's data (a cache miss
 * per node of a tree larger than the cache). A child stored inline has no data.
 */
#define PREFETCH_AHEAD 4

static inline void prefetch_child(Subtree parent, uint32_t index) {
  if (index < parent.ptr->child_count) {
    Subtree child = ts_subtree_children(parent)[index];
    if (!child.data.is_inline) __builtin_prefetch(child.ptr);
  }
}

/* The frame of `parent`'s children, `parent` starting at `position`. */
static inline Frame frame_of(const TSLanguage *language, Subtree parent, Length position) {
  return (Frame){
    .parent = parent,
    .aliases = ts_language_alias_sequence(language, parent.ptr->production_id),
    .position = position,
    .child_index = 0,
    .structural_index = 0,
  };
}

/*
 * Takes `frame`'s next child (as tree-sitter's own child iterators do): its alias in
 * the parent's production (0: none; extras have none) and where it starts.
 */
static inline const Subtree *next_child(Frame *frame, TSSymbol *alias, Length *position) {
  const Subtree *child = &ts_subtree_children(frame->parent)[frame->child_index];
  *alias = 0;
  if (!ts_subtree_extra(*child)) {
    if (frame->aliases) *alias = frame->aliases[frame->structural_index];
    frame->structural_index++;
  }
  if (frame->child_index > 0) {
    frame->position = length_add(frame->position, ts_subtree_padding(*child));
  }
  *position = frame->position;
  frame->position = length_add(frame->position, ts_subtree_size(*child));
  frame->child_index++;
  return child;
}

static inline bool wanted(const TSLanguage *language, TSSymbol symbol,
                          const uint64_t *kinds, size_t kind_bits) {
  if (!kinds) return true;
  TSSymbol public_symbol = ts_language_public_symbol(language, symbol);
  return public_symbol < kind_bits &&
         ((kinds[public_symbol / 64] >> (public_symbol % 64)) & 1);
}

/*
 * `wanted` of every symbol of the language (its internal ones and its aliases), as a
 * bitmap by the symbol a subtree or an alias holds: the walk looks a visible node's
 * kind up there instead of mapping it to its public symbol first (a call into
 * tree-sitter per visible node, 3 % of the walk's instructions on Python).
 */
typedef struct {
  uint64_t local[16];
  uint64_t *words;
  uint32_t bits;
} Wanted;

/* False when out of memory. */
static bool wanted_init(Wanted *self, const TSLanguage *language,
                        const uint64_t *kinds, size_t kind_bits) {
  uint32_t count = ts_language_symbol_count(language);
  size_t words = (size_t)count / 64 + 1;
  self->bits = count;
  self->words = words <= 16 ? self->local : calloc(words, sizeof(uint64_t));
  if (!self->words) return false;
  if (self->words == self->local) memset(self->local, 0, sizeof(self->local));
  for (uint32_t symbol = 0; symbol < count; symbol++) {
    if (wanted(language, (TSSymbol)symbol, kinds, kind_bits)) {
      self->words[symbol / 64] |= (uint64_t)1 << (symbol % 64);
    }
  }
  return true;
}

static inline bool wanted_symbol(const Wanted *self, const TSLanguage *language, TSSymbol symbol,
                                 const uint64_t *kinds, size_t kind_bits) {
  if (symbol < self->bits) return (self->words[symbol / 64] >> (symbol % 64)) & 1;
  /* ERROR and its repetition are no index of the map. */
  return wanted(language, symbol, kinds, kind_bits);
}

static void wanted_free(Wanted *self) {
  if (self->words != self->local) free(self->words);
}

/*
 * Calls `visit` on `root` and every visible node under it, in pre-order, whose
 * public symbol is set in the bitmap `kinds` of `kind_bits` bits (NULL: every one).
 * Returns false when out of memory (the walk is then incomplete).
 */
bool astedit_walk(TSNode root, const uint64_t *kinds, size_t kind_bits,
                  astedit_visit visit, void *context) {
  const TSTree *tree = root.tree;
  const TSLanguage *language = tree->language;
  /* The start node is reported whatever it is, as by the cursor walk. */
  TSSymbol root_symbol = ts_node_symbol(root);
  if (!kinds || (root_symbol < kind_bits &&
                 ((kinds[root_symbol / 64] >> (root_symbol % 64)) & 1))) {
    visit(context, root);
  }
  Subtree top = *(const Subtree *)root.id;
  if (ts_subtree_child_count(top) == 0) return true;

  Wanted table = {0};
  if (kinds && !wanted_init(&table, language, kinds, kind_bits)) return false;
  size_t capacity = 64, depth = 0;
  Frame *stack = malloc(capacity * sizeof(Frame));
  if (!stack) {
    if (kinds) wanted_free(&table);
    return false;
  }
  stack[depth++] = frame_of(language, top, (Length){ts_node_start_byte(root), ts_node_start_point(root)});
  while (depth > 0) {
    Frame *frame = &stack[depth - 1];
    if (frame->child_index == frame->parent.ptr->child_count) {
      depth--;
      continue;
    }
    prefetch_child(frame->parent, frame->child_index + PREFETCH_AHEAD);
    TSSymbol alias;
    Length position;
    const Subtree *child = next_child(frame, &alias, &position);

    if (ts_subtree_visible(*child) || alias) {
      TSSymbol symbol = alias ? alias : ts_subtree_symbol(*child);
      if (!kinds || wanted_symbol(&table, language, symbol, kinds, kind_bits)) {
        visit(context, ts_node_new(tree, child, position, alias));
      }
    }
    if (ts_subtree_child_count(*child) > 0) {
      if (depth == capacity) {
        Frame *grown = realloc(stack, 2 * capacity * sizeof(Frame));
        if (!grown) {
          free(stack);
          if (kinds) wanted_free(&table);
          return false;
        }
        stack = grown;
        capacity *= 2;
      }
      for (uint32_t i = 0; i < PREFETCH_AHEAD; i++) prefetch_child(*child, i);
      stack[depth++] = frame_of(language, *child, position);
    }
  }
  free(stack);
  if (kinds) wanted_free(&table);
  return true;
}

/*
 * Writes the visible children of `node` to `out` (at most `capacity` of them), in the
 * order a TSTreeCursor's first-child and next-sibling steps reach them (a hidden
 * child is looked through, an alias makes a child visible), and returns how many there
 * are: more than `capacity` means call again with more room. SIZE_MAX when out of
 * memory. ast-grep-core's matcher takes a node's children through a new cursor each
 * time, and those steps were most of its cost on `$F($$$A)`.
 */
size_t astedit_children(TSNode node, TSNode *out, size_t capacity) {
  const TSTree *tree = node.tree;
  const TSLanguage *language = tree->language;
  Subtree top = *(const Subtree *)node.id;
  if (ts_subtree_child_count(top) == 0) return 0;

  /* Hidden nodes nest only a few deep; the stack grows on the heap past that. */
  Frame local[16];
  Frame *stack = local;
  size_t stack_capacity = sizeof(local) / sizeof(local[0]), depth = 0, count = 0;
  stack[depth++] = frame_of(language, top, (Length){ts_node_start_byte(node), ts_node_start_point(node)});
  while (depth > 0) {
    Frame *frame = &stack[depth - 1];
    if (frame->child_index == frame->parent.ptr->child_count) {
      depth--;
      continue;
    }
    TSSymbol alias;
    Length position;
    const Subtree *child = next_child(frame, &alias, &position);

    if (ts_subtree_visible(*child) || alias) {
      if (count < capacity) out[count] = ts_node_new(tree, child, position, alias);
      count++;
    } else if (ts_subtree_child_count(*child) > 0) {
      if (depth == stack_capacity) {
        Frame *grown = malloc(2 * stack_capacity * sizeof(Frame));
        if (!grown) {
          if (stack != local) free(stack);
          return SIZE_MAX;
        }
        memcpy(grown, stack, depth * sizeof(Frame));
        if (stack != local) free(stack);
        stack = grown;
        stack_capacity *= 2;
      }
      stack[depth++] = frame_of(language, *child, position);
    }
  }
  if (stack != local) free(stack);
  return count;
}
