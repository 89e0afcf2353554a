import { createInterface } from 'node:readline';

/**
 * Questions for `filehaven login`. At a terminal the password is read without echo; with
 * stdin from a pipe (scripts, tests) the answers are its lines, in order.
 */
export class Prompt {
  private lines: AsyncIterator<string> | undefined;
  private reader: ReturnType<typeof createInterface> | undefined;

  /** A visible answer (the login). */
  async ask(question: string): Promise<string> {
    if (!process.stdin.isTTY) return this.nextLine(question);
    process.stderr.write(question);
    return this.nextLine(question);
  }

  /** A hidden answer (the password): no echo at a terminal. */
  async askHidden(question: string): Promise<string> {
    if (!process.stdin.isTTY) return this.nextLine(question);
    this.close();
    return readHidden(question);
  }

  /** Lets stdin go, so the process can end. */
  close(): void {
    this.reader?.close();
    this.reader = undefined;
    this.lines = undefined;
  }

  private async nextLine(question: string): Promise<string> {
    this.reader ??= createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
    this.lines ??= this.reader[Symbol.asyncIterator]();
    const next = await this.lines.next();
    if (next.done) throw new Error(`no answer to "${question.trim()}" on stdin`);
    return next.value;
  }
}

/** Reads a line at the terminal in raw mode, echoing nothing; Ctrl-C aborts, backspace edits. */
function readHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let answer = '';
    const done = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(answer);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return done();
        // Ctrl-C in raw mode is a byte, not a signal: raise it, so the command ends as any
        // interrupted one does (exit 130).
        if (char === '\u0003') {
          (process.emit as (event: string, signal: string) => boolean)('SIGINT', 'SIGINT');
          return done(new Error('interrupted'));
        }
        if (char === '\u0004' && answer === '') return done(new Error('no password given'));
        if (char === '\u007f' || char === '\b') answer = answer.slice(0, -1);
        else if (char >= ' ') answer += char;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
