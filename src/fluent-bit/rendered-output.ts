/** Internal shapes of a rendered fluent-bit output (not part of the public API). */
import { ClassicEntry } from './classic-format';

/** An environment variable the pod must take from a Secret key. */
export interface SecretEnvVar {
  readonly envName: string;
  readonly secretName: string;
  readonly key: string;
}

/** One output rendered for a given alias. */
export interface RenderedOutput {
  readonly entries: ClassicEntry[];
  readonly secretEnv: SecretEnvVar[];
}
