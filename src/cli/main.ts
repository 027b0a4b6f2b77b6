#!/usr/bin/env node
// The `node-agents` executable (package.json bin → lib/cli/main.js): wires the process to runCli.
import * as fs from 'fs';
import { runCli } from './run';

/** A buffer to sleep on (Atomics.wait) while a full pipe drains. */
const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `text` to a file descriptor before returning: backpressure. process.stdout on a pipe
 * queues what the reader has not taken yet, so `coverage --json | …` on 130k nodes held the whole
 * report in memory (1.1 GB, against 394 MB to a file). A write here waits for the pipe instead; a
 * non-blocking descriptor (EAGAIN) is retried after a short sleep. A reader that went away (`| head`)
 * ends the run quietly: that is not an error worth a stack trace.
 */
function writer(fd: number): { write(text: string): void } {
  return {
    write(text: string) {
      const buffer = Buffer.from(text, 'utf-8');
      let offset = 0;
      while (offset < buffer.length) {
        try {
          offset += fs.writeSync(fd, buffer, offset, buffer.length - offset);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'EAGAIN') {
            Atomics.wait(nap, 0, 0, 2);
          } else if (code === 'EPIPE') {
            process.exit(process.exitCode ?? 0);
          } else {
            throw error;
          }
        }
      }
    },
  };
}

process.exitCode = runCli(process.argv.slice(2), { stdout: writer(1), stderr: writer(2), cwd: process.cwd() });
