; andon extraction query for Rust (tree-sitter-rust 0.24).
; Capture vocabulary (see grammars/README.md): @import.*, @mod, @def.<kind> with @name,
; @call with @name, @ref, @comment, @string. Captures starting with `_` only feed predicates.

(use_declaration) @import.use
(extern_crate_declaration name: (identifier) @name) @import.extern_crate
(scoped_identifier path: (_)) @import.qualified
(scoped_type_identifier path: (_)) @import.qualified
(macro_invocation (token_tree) @import.macro_tokens)
(mod_item name: (identifier) @name) @mod
(impl_item trait: (_)) @impl

(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(union_item name: (type_identifier) @name) @def.union
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.static
(macro_definition name: (identifier) @name) @def.macro

(call_expression function: [
  (identifier) @name
  (scoped_identifier name: (identifier) @name)
  (field_expression field: (field_identifier) @name)
  (generic_function function: [(identifier) @name (scoped_identifier name: (identifier) @name) (field_expression field: (field_identifier) @name)])
]) @call
(macro_invocation macro: [(identifier) @name (scoped_identifier name: (identifier) @name)]) @call.macro

(identifier) @ref
(type_identifier) @ref

(line_comment) @comment
(block_comment) @comment
(string_literal) @string
(raw_string_literal) @string
