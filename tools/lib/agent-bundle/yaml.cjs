// Stands in for the `yaml` package in the agent's bundle (tools/lib/setup.sh, build_agent): the
// real one is loaded at the first use of any of its exports. @skiff/domain's compose helpers
// import it, and the agent loads @skiff/domain at start, but only a compose command parses a
// compose file; evaluating yaml would cost every idle agent ~1.6 MB. lazy-load.spec.ts checks
// that these names are yaml's.
'use strict';

const NAMES = [
  'Composer', 'Document', 'Schema', 'YAMLError', 'YAMLParseError', 'YAMLWarning', 'Alias', 'isAlias', 'isCollection',
  'isDocument', 'isMap', 'isNode', 'isPair', 'isScalar', 'isSeq', 'Pair', 'Scalar', 'YAMLMap', 'YAMLSeq', 'CST', 'Lexer',
  'LineCounter', 'Parser', 'parse', 'parseAllDocuments', 'parseDocument', 'stringify', 'visit', 'visitAsync',
];

let yaml;
const load = () => (yaml ??= require('../../../node_modules/yaml/dist/index.js'));
for (const name of NAMES) Object.defineProperty(module.exports, name, { enumerable: true, get: () => load()[name] });
