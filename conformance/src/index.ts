export { runConformance, type ConformanceOptions } from './conformance-run.js';
export { runScenario, type RunOptions, type ScenarioResult } from './scenario-run.js';
export { loadScenarios, SCENARIO_DIRECTORY } from './scenario-files.js';
export { formatReport } from './report.js';
export { matchPattern, type MatchContext, type MatchResult, type StreamedText } from './pattern.js';
export { parseEndpoint, type Endpoint } from './endpoint.js';
export { FrameValidator } from './frame-validator.js';
export type { Scenario, Step, Generator } from './scenario.js';
export type { Json } from './json.js';
