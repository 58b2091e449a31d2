; andon extraction query for Python (tree-sitter-python 0.25).
; Capture vocabulary: see grammars/README.md.

(import_statement) @import.import
(import_from_statement) @import.from

(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
; PEP 695 `type X = …` (the name is the identifier inside `left`, also `type X[T] = …`)
(type_alias_statement left: (type) @name) @def.type
; assignments that are statements; which of them are module-level (also inside top-level
; `if`/`try` blocks) and which names they bind is decided in src/extract/python.rs (a nested
; pattern per context here made the query several times slower to compile)
(expression_statement (assignment) @def.variable)
; other bindings of module-level names (a `for` target, a `with … as` target, `:=`, `global`):
; which are module-level is decided in code, as for assignments
(for_statement) @def.for
(with_statement) @def.with
(named_expression) @def.walrus
(global_statement) @def.global
; parameters bind names that may shadow an import (the arity check leaves such calls alone)
(parameters) @params
(lambda_parameters) @params

; every call: what it calls, `__import__`/`importlib.import_module` (dynamic imports) and
; `__all__.extend(…)` are told apart in src/extract/python.rs (one pattern compiles fastest)
(call) @call
; `__all__ += …` (and `__all__.extend(…)`, a call): the module's names are computed
(augmented_assignment left: (identifier) @_all (#eq? @_all "__all__")) @open
(raise_statement) @raise

(identifier) @ref

(comment) @comment
(string) @string
