; andon extraction query for TypeScript, TSX and JavaScript (tree-sitter-typescript 0.23; .js/.jsx
; files are parsed with the TSX grammar). Capture vocabulary: see grammars/README.md.

(import_statement) @import.import
(export_statement source: (_)) @import.export

(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(function_signature name: (identifier) @name) @def.function
(class_declaration name: (type_identifier) @name) @def.class
(abstract_class_declaration name: (type_identifier) @name) @def.class
(interface_declaration name: (type_identifier) @name) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.type
(enum_declaration name: (identifier) @name) @def.enum
(internal_module name: (identifier) @name) @def.namespace
; module-level variables only
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (export_statement declaration: (variable_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(method_definition name: (property_identifier) @name) @def.method
(abstract_method_signature name: (property_identifier) @name) @def.method
(export_statement) @export
; CommonJS: `module.exports = …`, `exports.x = …` (which left sides export is decided in code)
(expression_statement (assignment_expression left: [(member_expression) (subscript_expression)]) @export.cjs)

; every call expression: `require(…)` and `import(…)` (imports) and what it calls are told apart
; in src/extract/typescript.rs (one pattern compiles fastest)
(call_expression) @call
(new_expression constructor: (identifier) @name) @call
(throw_statement) @throw

(identifier) @ref
(type_identifier) @ref

(comment) @comment
(string) @string
