// Property-based HTTP fuzzing of every endpoint and page (issue 7, "Fuzzing in the test
// suite"): fast-check generates raw requests (methods, targets, headers, bodies, framings;
// arbitraries.ts), each sent on its own socket to a real `filehaven serve` process, and
// checks the property of checks.ts and harness.ts after every one. FILEHAVEN_FUZZ_RUNS,
// FILEHAVEN_FUZZ_SEED, FILEHAVEN_FUZZ_FAMILY and FILEHAVEN_FUZZ_PATH steer a run
// (fuzz-config.ts); a failure prints the seed and the line that replays it.
import { httpFuzzSuite } from './fuzz-suite.js';
import { embeddedTarget } from './targets.js';

// One call per backend; PostgreSQL and S3 targets join here once they exist.
httpFuzzSuite(embeddedTarget);
