import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

// The four classes the metrics use, from their own files: the package's index also loads
// its default-metrics collectors, and with them the OpenTelemetry API, about 5 MB of idle
// resident memory for code a server never runs (issue 9: idle RSS; the same move as
// limits/rate-limiter-classes.ts). The types are the package's own.
const require = createRequire(import.meta.url);

export const Registry: typeof PromClient.Registry = require('prom-client/lib/registry.js');
export type Registry = PromClient.Registry;
export const Counter: typeof PromClient.Counter = require('prom-client/lib/counter.js');
export const Gauge: typeof PromClient.Gauge = require('prom-client/lib/gauge.js');
export const Histogram: typeof PromClient.Histogram = require('prom-client/lib/histogram.js');
