import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULTS } from '../../src/config/config.js';
import { SQLITE_FILE } from '../../src/db/dialect.js';
import { defer } from './cleanup.js';
import { listeningUrl } from './filehaven-server.js';
import { rssOf } from './measure.js';
import type { MetadataLocation } from './seed.js';

/*
 * What the platform allows on this machine, measured in the same run as filehaven: where a
 * target is missed, these say how much of the gap is Node and the stack, and how much is
 * filehaven (issue 9: "show the measurement that proves it").
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A bare `node:http` server that stores a `PUT` body as filehaven's data folder would, with
 * nothing else: 1 MiB batched writes, an fsync before the answer, and with `?hash` SHA-256
 * of the bytes on the way. No multipart parsing, no database, no limits.
 */
export async function startBareNodeWriter(dir: string): Promise<{ url: string }> {
  const script = `
    const http = require('node:http');
    const fs = require('node:fs');
    const { createHash } = require('node:crypto');
    const { Transform } = require('node:stream');
    const { pipeline } = require('node:stream/promises');
    const target = require('node:path').join(process.env.BARE_DIR, 'bare-put.bin');
    const server = http.createServer(async (request, response) => {
      try {
        const hash = createHash('sha256');
        const steps = [request];
        if (request.url.includes('hash')) steps.push(new Transform({ transform(chunk, _e, done) { hash.update(chunk); done(null, chunk); } }));
        const file = fs.createWriteStream(target, { highWaterMark: 1024 * 1024 });
        await pipeline(...steps, file);
        const handle = await fs.promises.open(target, 'r+');
        await handle.sync();
        await handle.close();
        response.writeHead(201).end(hash.digest('hex'));
      } catch (error) {
        response.writeHead(500).end(String(error));
      }
    });
    server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, BARE_DIR: dir } });
  const exited = once(child, 'exit');
  defer('stop the bare node:http writer', async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  return { url: await listeningUrl(child, 'the bare node:http writer') };
}

/**
 * The same ceiling on S3: a bare `node:http` server that hashes a `PUT` body with SHA-256
 * on its way into a lib-storage multipart upload, with the server's part and queue size
 * (one object, replaced each time). What filehaven's POST /files must do at least on S3,
 * where the raw SDK reference neither receives over HTTP nor hashes.
 */
export async function startBareS3Writer(s3: {
  endpoint: string;
  bucket: string;
  partSize: number;
  queueSize: number;
  env: Record<string, string>;
}): Promise<{ url: string }> {
  const script = `
    const http = await import('node:http');
    const { createHash } = await import('node:crypto');
    const { Transform } = await import('node:stream');
    const { S3Client } = await import('@aws-sdk/client-s3');
    const { Upload } = await import('@aws-sdk/lib-storage');
    const client = new S3Client({
      endpoint: process.env.BARE_S3_ENDPOINT,
      region: 'us-east-1',
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const server = http.createServer(async (request, response) => {
      try {
        const hash = createHash('sha256');
        const Body = request.pipe(new Transform({ transform(chunk, _e, done) { hash.update(chunk); done(null, chunk); } }));
        await new Upload({
          client,
          params: { Bucket: process.env.BARE_S3_BUCKET, Key: 'bare-put.bin', Body },
          partSize: Number(process.env.BARE_S3_PART_SIZE),
          queueSize: Number(process.env.BARE_S3_QUEUE_SIZE),
          leavePartsOnError: false,
        }).done();
        response.writeHead(201).end(hash.digest('hex'));
      } catch (error) {
        response.writeHead(500).end(String(error));
      }
    });
    server.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + server.address().port));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      ...s3.env,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      BARE_S3_ENDPOINT: s3.endpoint,
      BARE_S3_BUCKET: s3.bucket,
      BARE_S3_PART_SIZE: String(s3.partSize),
      BARE_S3_QUEUE_SIZE: String(s3.queueSize),
    },
  });
  const exited = once(child, 'exit');
  defer('stop the bare S3 writer', async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  return { url: await listeningUrl(child, 'the bare S3 writer') };
}

/**
 * Resident memory of the stack filehaven stands on, with none of filehaven: Fastify
 * listening with one route, Kysely over better-sqlite3 with one database open, 2 s after
 * the start (as the idle figure is taken).
 */
export async function stackFloorRss(dir: string): Promise<number> {
  const script = `
    const { default: Fastify } = await import('fastify');
    const { Kysely, SqliteDialect, sql } = await import('kysely');
    const { default: SQLite } = await import('better-sqlite3');
    const db = new Kysely({ dialect: new SqliteDialect({ database: new SQLite(process.env.FLOOR_DB) }) });
    await sql\`select 1\`.execute(db);
    const app = Fastify();
    app.get('/', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    console.log('listening on http://127.0.0.1:' + app.server.address().port);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, FLOOR_DB: path.join(dir, 'floor.db') },
  });
  const exited = once(child, 'exit');
  try {
    await listeningUrl(child, 'the stack floor probe');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return rssOf(child.pid!);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The stack's own cost of an authenticated API answer: Fastify with one route that runs
 * one query through Kysely on the run's own database (the `bench` account's row, as
 * `GET /account` reads one row) and answers the given bytes, with none of filehaven
 * (no hooks, limits, metrics or Atom rendering). Kysely is used as its authors ship it;
 * on PostgreSQL the pool has filehaven's default size. Stopped when the section unwinds.
 */
export async function startStackRequestFloor(metadata: MetadataLocation, answer: { headers: Record<string, string>; body: string }): Promise<{ url: string }> {
  const script = `
    const { default: Fastify } = await import('fastify');
    const { Kysely, SqliteDialect, PostgresDialect, CompiledQuery } = await import('kysely');
    const where = JSON.parse(process.env.FLOOR_METADATA);
    const { headers, body } = JSON.parse(process.env.FLOOR_ANSWER);
    let dialect;
    if (where.kind === 'sqlite') {
      const { default: SQLite } = await import('better-sqlite3');
      dialect = new SqliteDialect({ database: new SQLite(where.file) });
    } else {
      const { default: pg } = await import('pg');
      dialect = new PostgresDialect({
        pool: new pg.Pool({ connectionString: where.url, max: Number(process.env.FLOOR_POOL_SIZE) }),
        onCreateConnection: (connection) => connection.executeQuery(CompiledQuery.raw('set search_path to "' + where.schema + '"')),
      });
    }
    const db = new Kysely({ dialect });
    const app = Fastify();
    app.get('/account', async (request, reply) => {
      const account = await db.selectFrom('accounts').selectAll().where('login', '=', 'bench').executeTakeFirst();
      if (!account) throw new Error('no account bench');
      return reply.headers(headers).send(body);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    console.log('listening on http://127.0.0.1:' + app.server.address().port);
  `;
  const where = metadata.kind === 'sqlite' ? { kind: 'sqlite', file: path.join(metadata.dataDir, SQLITE_FILE) } : metadata;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      FLOOR_METADATA: JSON.stringify(where),
      FLOOR_ANSWER: JSON.stringify(answer),
      FLOOR_POOL_SIZE: String(DEFAULTS.databasePoolSize),
    },
  });
  const exited = once(child, 'exit');
  defer('stop the stack request floor', async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  });
  return { url: await listeningUrl(child, 'the stack request floor') };
}
