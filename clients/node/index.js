// faultline's Node package: the control API client (./control.js) and a `faultline serve` /
// `faultline proxy` process with its journal's rounds (./harness.js). The node:test hooks are
// 'faultline/node-test' (./node-test.js). docs/guides/node.md shows all three.
export { FaultlineControl, FaultlineError, parseBanner } from './control.js';
export { Faultline, FaultlineCheckError, findBinary, startFaultline } from './harness.js';
