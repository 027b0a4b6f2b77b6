/** Where the CLI writes and which directory relative paths start from: process streams, or buffers in tests. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly cwd: string;
}
