/*!
Agent patches in the `*** Begin Patch` format: parse, resolve every chunk uniquely or
refuse with a precise reason, and produce a [`crate::change::ChangeSet`].

STUB: to be implemented.
*/
