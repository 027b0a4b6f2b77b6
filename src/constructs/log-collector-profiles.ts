/**
 * The log collector's resource profiles: each profile's fluent-bit buffers (`storage.max_chunks_up`,
 * `storage.backlog.mem_limit`) are part of its config, so a profile that sizes them gets a config of its own (its own
 * content-addressed ConfigMap, passed down as the profile's `configData`); the others share the collector's.
 */
import { IConstruct } from 'constructs';
import { AgentResourceProfile } from '../agent/resource-profiles';
import { DEFAULT_STORAGE_MAX_CHUNKS_UP } from '../fluent-bit/config';
import { parseQuantity } from '../util/quantity';
import { throwIfProblems } from '../validation/errors';

/** fluent-bit's chunk size: a chunk holds about 2 MB (CHUNK_SIZE in fluent-bit's input chunks); memory ≈ chunks × 2 MB. */
const CHUNK_BYTES = 2 * 1024 * 1024;

/** The collector's own buffer settings, where a profile gives none. */
export interface CollectorBuffers {
  readonly storageMaxChunksUp?: number;
  readonly storageBacklogMemLimit?: string;
}

/**
 * The profiles as the base agent takes them: the buffer settings turned into the profile's config (`configFor`
 * renders the collector's config with them). The buffers are checked against the memory limit once for the
 * collector's own settings and once per profile, with what the profile inherits from them (one rule, bufferProblems).
 */
export function collectorProfiles(scope: IConstruct, profiles: readonly AgentResourceProfile[] | undefined, own: CollectorBuffers,
  ownMemoryLimit: string | undefined, configFor: (buffers: CollectorBuffers) => { [file: string]: string }): AgentResourceProfile[] | undefined {
  const problems = bufferProblems('storageMaxChunksUp', own, ownMemoryLimit);
  const result = profiles?.map((profile, i) => {
    const prop = `resourceProfiles[${i}] ("${profile.name}")`;
    if (profile.configData !== undefined) {
      problems.push(`${prop}.configData: the collector writes its config itself; size its buffers with storageMaxChunksUp and storageBacklogMemLimit`);
    }
    const { storageMaxChunksUp, storageBacklogMemLimit, ...rest } = profile;
    const buffers: CollectorBuffers = {
      storageMaxChunksUp: storageMaxChunksUp ?? own.storageMaxChunksUp,
      storageBacklogMemLimit: storageBacklogMemLimit ?? own.storageBacklogMemLimit,
    };
    const memoryLimit = profile.resources?.memoryLimit ?? ownMemoryLimit;
    if (memoryLimit !== ownMemoryLimit || storageMaxChunksUp !== undefined || storageBacklogMemLimit !== undefined) {
      problems.push(...bufferProblems(prop, buffers, memoryLimit));
    }
    if (storageMaxChunksUp === undefined && storageBacklogMemLimit === undefined) return rest;
    return { ...rest, configData: configFor(buffers) };
  });
  throwIfProblems(scope, problems);
  return result;
}

/**
 * Chunks in memory plus the backlog replayed at start must stay below the container's memory limit, or the
 * profile's nodes OOM-kill the collector exactly when it buffers (an output outage, a restart with a backlog).
 */
function bufferProblems(prop: string, buffers: CollectorBuffers, memoryLimit: string | undefined): string[] {
  const chunks = buffers.storageMaxChunksUp ?? DEFAULT_STORAGE_MAX_CHUNKS_UP;
  const backlog = parseQuantity((buffers.storageBacklogMemLimit ?? '5M').replace(/([KMG])$/, '$1i'));
  const limit = parseQuantity(memoryLimit ?? '512Mi');
  if (!Number.isFinite(backlog) || !Number.isFinite(limit) || !Number.isInteger(chunks)) return [];
  const needs = chunks * CHUNK_BYTES + backlog;
  if (needs < limit) return [];
  const mib = (n: number) => `${Math.ceil(n / 2 ** 20)}Mi`;
  return [`${prop}: ${chunks} chunks of about 2 MB in memory plus a ${buffers.storageBacklogMemLimit ?? '5M'} backlog need about ${mib(needs)}, `
    + `not below the memory limit ${memoryLimit ?? '512Mi'}: the collector would be OOM-killed while it buffers. Raise resources.memoryLimit or lower storageMaxChunksUp`];
}
