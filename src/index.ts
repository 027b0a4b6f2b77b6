export * from './agent/update-strategy';
export * from './agent/node-requirement';
export * from './agent/options';
export { AgentRelease, AgentPreviousRelease, AgentRollout, RolloutWave, Promotion, ARGOCD_SYNC_WAVE } from './agent/rollout';
export * from './constructs/node-agent-daemon-set';
