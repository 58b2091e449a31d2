; andon extraction query for Python (tree-sitter-python 0.25).
; Capture vocabulary: see grammars/README.md.

(import_statement) @import.import
(import_from_statement) @import.from
(call function: (identifier) @_fn (#any-of? @_fn "__import__" "import_module")) @import.dynamic
(call function: (attribute attribute: (identifier) @_fn) (#eq? @_fn "import_module")) @import.dynamic

(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
; module-level assignments only (also inside top-level `if`/`try` blocks)
(module (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name) (tuple_pattern (identifier) @name)]) @def.variable))
(module (if_statement consequence: (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)]) @def.variable))))
(module (if_statement alternative: (else_clause body: (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)]) @def.variable)))))
(module (try_statement body: (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)]) @def.variable))))
(module (try_statement (except_clause (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)]) @def.variable)))))

(call function: [(identifier) @name (attribute attribute: (identifier) @name)]) @call
; `__all__ += …` and `__all__.extend(…)`/`.append(…)`: the module's names are computed
(augmented_assignment left: (identifier) @_all (#eq? @_all "__all__")) @open
(call function: (attribute object: (identifier) @_all attribute: (identifier) @_m (#eq? @_all "__all__") (#any-of? @_m "extend" "append" "insert" "__iadd__"))) @open
(raise_statement) @raise

(identifier) @ref

(comment) @comment
(string) @string
