/** Internal shapes of rendered fluent-bit outputs, filters and inputs (not part of the public API). */
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
  /** Paths the plugin writes to (all under the collector's state directory). */
  readonly writePaths: string[];
}

/** What an output needs from the collector to render. */
export interface OutputRenderContext {
  /** The collector's writable host directory (the container's root filesystem is read-only). */
  readonly stateDir: string;
}

/** What a filter rendered: its entries, the files it needs in the ConfigMap and the parsers it names. */
export interface RenderedFilter {
  readonly entries: ClassicEntry[];
  /** ConfigMap file name → content (Lua scripts). */
  readonly files: { [name: string]: string };
  /** Multiline parser names the filter references. */
  readonly multilineParsers: string[];
  /** `[PARSER]` names the filter references. */
  readonly parsers: string[];
  /** Aliases of the plugin instances the filter creates besides itself (emitters). */
  readonly extraAliases: string[];
}

/** What a filter needs from the collector to render. */
export interface FilterRenderContext {
  /** Directory where the ConfigMap's files are mounted. */
  readonly configDir: string;
}

/** What an input needs from the collector to render. */
export interface InputRenderContext {
  /** The collector's writable state directory (offset databases go there). */
  readonly stateDir: string;
  /** The filesystem buffering entries every input carries. */
  readonly storage: readonly ClassicEntry[];
}

/** What an input rendered. */
export interface RenderedInput {
  readonly entries: ClassicEntry[];
  /** Files it writes (its offset database). */
  readonly writePaths: string[];
  /** Host directories it reads. */
  readonly readDirs: string[];
  readonly parsers: string[];
  readonly multilineParsers: string[];
  /** Whether it reads the journal (needs /etc/machine-id). */
  readonly journal: boolean;
}
