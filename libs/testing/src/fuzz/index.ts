export { runFuzz, summaryLine, type FuzzOptions, type FuzzProblem, type FuzzReport } from './run.js';
