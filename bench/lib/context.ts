import type http from 'node:http';
import type { BackendSettings, RunningServer } from './filehaven-server.js';
import type { NginxReference } from './nginx.js';
import type { MetadataLocation } from './seed.js';
import type { S3Reference } from './storage.js';

/** What every section of one backend's run gets. */
export interface BenchContext {
  backend: 'local' | 'postgres-s3';
  dataDir: string;
  /** A scratch folder of the run, on the same disk as the data folder. */
  work: string;
  settings: BackendSettings;
  metadata: MetadataLocation;
  server: RunningServer;
  /** The login of the premium account `bench` (WebDAV signs in with it and the key). */
  login: string;
  /** An API key of the premium account `bench`. */
  key: string;
  /** nginx for the byte references, or why there is none. */
  nginx: NginxReference | { missing: string };
  /** The raw S3 reference (postgres-s3 only). */
  s3?: S3Reference;
  /** A keep-alive agent for request-by-request measurements. */
  agent: http.Agent;
  rounds: number;
}
