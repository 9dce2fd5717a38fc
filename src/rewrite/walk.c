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

static inline bool wanted(const TSLanguage *language, TSSymbol symbol,
                          const uint64_t *kinds, size_t kind_bits) {
  if (!kinds) return true;
  TSSymbol public_symbol = ts_language_public_symbol(language, symbol);
  return public_symbol < kind_bits &&
         ((kinds[public_symbol / 64] >> (public_symbol % 64)) & 1);
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

  size_t capacity = 64, depth = 0;
  Frame *stack = malloc(capacity * sizeof(Frame));
  if (!stack) return false;
  stack[depth++] = (Frame){
    .parent = top,
    .aliases = ts_language_alias_sequence(language, top.ptr->production_id),
    .position = {ts_node_start_byte(root), ts_node_start_point(root)},
    .child_index = 0,
    .structural_index = 0,
  };
  while (depth > 0) {
    Frame *frame = &stack[depth - 1];
    if (frame->child_index == frame->parent.ptr->child_count) {
      depth--;
      continue;
    }
    const Subtree *child = &ts_subtree_children(frame->parent)[frame->child_index];
    TSSymbol alias = 0;
    if (!ts_subtree_extra(*child)) {
      if (frame->aliases) alias = frame->aliases[frame->structural_index];
      frame->structural_index++;
    }
    if (frame->child_index > 0) {
      frame->position = length_add(frame->position, ts_subtree_padding(*child));
    }
    Length position = frame->position;
    frame->position = length_add(frame->position, ts_subtree_size(*child));
    frame->child_index++;

    if (ts_subtree_visible(*child) || alias) {
      TSSymbol symbol = alias ? alias : ts_subtree_symbol(*child);
      if (wanted(language, symbol, kinds, kind_bits)) {
        visit(context, ts_node_new(tree, child, position, alias));
      }
    }
    if (ts_subtree_child_count(*child) > 0) {
      if (depth == capacity) {
        Frame *grown = realloc(stack, 2 * capacity * sizeof(Frame));
        if (!grown) {
          free(stack);
          return false;
        }
        stack = grown;
        capacity *= 2;
      }
      stack[depth++] = (Frame){
        .parent = *child,
        .aliases = ts_language_alias_sequence(language, child->ptr->production_id),
        .position = position,
        .child_index = 0,
        .structural_index = 0,
      };
    }
  }
  free(stack);
  return true;
}
