/** `rezolus status`: the fleet at a glance from the bus. gather (I/O) -> assess (pure) -> format (pure). */
export { assessStatus, DEFAULT_SILENT_AFTER_MS, type AssessOptions } from './assess.js';
export { formatStatus, summaryLine } from './format.js';
export { gatherStatus, NoRezolusStreamError, type GatherOptions } from './gather.js';
export type { ConsumerReport, HostReport, HostState, SamplerReport, StatusReport, StreamReport } from './report.js';
export type { BusSnapshot } from './snapshot.js';
