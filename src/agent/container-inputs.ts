/**
 * The container inputs a user fills (environment values, probes, lifecycle hooks, protocols) as the library's own
 * small types, so that an app on any cdk8s-plus major can pass them: no prop takes a cdk8s-plus class. Each
 * converts to its cdk8s-plus-28 object only inside the library (`_toKplus`), where the DaemonSet is rendered.
 */
import { Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { brand } from '../validation/brand';
import { checkArgs } from '../validation/struct-check';

/** Network protocol of a container port. */
export enum AgentProtocol {
  /** TCP. */
  TCP = 'TCP',
  /** UDP. */
  UDP = 'UDP',
  /** SCTP. */
  SCTP = 'SCTP',
}

/** A field of the pod or its node, for an environment variable (the downward API). */
export enum AgentEnvFieldPath {
  /** The pod's name. */
  POD_NAME = 'metadata.name',
  /** The pod's namespace. */
  POD_NAMESPACE = 'metadata.namespace',
  /** The pod's UID. */
  POD_UID = 'metadata.uid',
  /** The pod's IP address. */
  POD_IP = 'status.podIP',
  /** The pod's IP addresses (IPv4 and IPv6 on a dual-stack cluster). */
  POD_IPS = 'status.podIPs',
  /** The pod's ServiceAccount name. */
  SERVICE_ACCOUNT_NAME = 'spec.serviceAccountName',
  /** The name of the node the pod runs on. */
  NODE_NAME = 'spec.nodeName',
  /** The IP address of the node the pod runs on. */
  NODE_IP = 'status.hostIP',
}

/** Options of an environment value read from a Secret or ConfigMap key. */
export interface AgentEnvValueOptions {
  /**
   * Start the container even when the Secret, ConfigMap or key is missing.
   * @default false
   */
  readonly optional?: boolean;
}

/** The value of one environment variable: a literal, a Secret's or ConfigMap's key, or a field of the pod. */
export class AgentEnvValue {
  /** A literal value. */
  public static fromValue(value: string): AgentEnvValue {
    checkArgs('AgentEnvValue.fromValue', [value]);
    return new AgentEnvValue(() => kplus.EnvValue.fromValue(value));
  }

  /** The value of `key` in the Secret `secretName` of the agent's namespace. */
  public static fromSecret(secretName: string, key: string, options: AgentEnvValueOptions = {}): AgentEnvValue {
    checkArgs('AgentEnvValue.fromSecret', [secretName, key, options]);
    // cdk8s-plus-28 reads only the Secret's name: a name is all a reference needs
    const secret = { name: secretName } as kplus.ISecret;
    return new AgentEnvValue(() => kplus.EnvValue.fromSecretValue({ secret, key }, { optional: options.optional }));
  }

  /** The value of `key` in the ConfigMap `configMapName` of the agent's namespace. */
  public static fromConfigMap(configMapName: string, key: string, options: AgentEnvValueOptions = {}): AgentEnvValue {
    checkArgs('AgentEnvValue.fromConfigMap', [configMapName, key, options]);
    // cdk8s-plus-28 reads only the ConfigMap's name
    const configMap = { name: configMapName } as kplus.IConfigMap;
    return new AgentEnvValue(() => kplus.EnvValue.fromConfigMap(configMap, key, { optional: options.optional }));
  }

  /** A field of the pod or its node. */
  public static fromField(path: AgentEnvFieldPath): AgentEnvValue {
    checkArgs('AgentEnvValue.fromField', [path]);
    return new AgentEnvValue(() => kplus.EnvValue.fromFieldRef(path as string as kplus.EnvFieldPaths));
  }

  private constructor(private readonly make: () => kplus.EnvValue) {}

  /** @internal */
  public _toKplus(): kplus.EnvValue {
    return this.make();
  }
}
brand(AgentEnvValue, 'AgentEnvValue');

/** Timing and thresholds of a probe. */
export interface AgentProbeOptions {
  /**
   * Failures in a row after which the probe counts as failed.
   * @default 3
   */
  readonly failureThreshold?: number;
  /**
   * Time after the container starts before the first probe.
   * @default - immediately
   */
  readonly initialDelaySeconds?: Duration;
  /**
   * Time between probes.
   * @default Duration.seconds(10)
   */
  readonly periodSeconds?: Duration;
  /**
   * Successes in a row after a failure before the probe counts as passed (1 for liveness and startup probes).
   * @default 1
   */
  readonly successThreshold?: number;
  /**
   * Time after which one probe times out.
   * @default Duration.seconds(1)
   */
  readonly timeoutSeconds?: Duration;
}

/** URL scheme of an HTTP probe or hook. */
export enum AgentConnectionScheme {
  /** Plain HTTP. */
  HTTP = 'HTTP',
  /** HTTPS, the certificate not verified. */
  HTTPS = 'HTTPS',
}

/** Options of an HTTP GET probe. */
export interface AgentHttpProbeOptions extends AgentProbeOptions {
  /**
   * The port.
   * @default - the container's first port
   */
  readonly port?: number;
  /**
   * The scheme.
   * @default AgentConnectionScheme.HTTP
   */
  readonly scheme?: AgentConnectionScheme;
  /**
   * The host.
   * @default - the pod's IP address
   */
  readonly host?: string;
}

/** Options of a TCP probe. */
export interface AgentTcpProbeOptions extends AgentProbeOptions {
  /**
   * The port.
   * @default - the container's first port
   */
  readonly port?: number;
  /**
   * The host.
   * @default - the pod's IP address
   */
  readonly host?: string;
}

/** A readiness, liveness or startup probe of a container. */
export class AgentProbe {
  /** An HTTP GET of `path`: a status from 200 to 399 passes. */
  public static fromHttpGet(path: string, options: AgentHttpProbeOptions = {}): AgentProbe {
    checkArgs('AgentProbe.fromHttpGet', [path, options]);
    const { scheme, ...rest } = options;
    return new AgentProbe(() => kplus.Probe.fromHttpGet(path, { ...rest, scheme: scheme as string as kplus.ConnectionScheme | undefined }));
  }

  /** A TCP connection to the port: opening it passes. */
  public static fromTcpSocket(options: AgentTcpProbeOptions = {}): AgentProbe {
    checkArgs('AgentProbe.fromTcpSocket', [options]);
    return new AgentProbe(() => kplus.Probe.fromTcpSocket(options));
  }

  /** A command run in the container: exit status 0 passes. */
  public static fromCommand(command: string[], options: AgentProbeOptions = {}): AgentProbe {
    checkArgs('AgentProbe.fromCommand', [command, options]);
    return new AgentProbe(() => kplus.Probe.fromCommand(command, options));
  }

  private constructor(private readonly make: () => kplus.Probe) {}

  /** @internal */
  public _toKplus(): kplus.Probe {
    return this.make();
  }
}
brand(AgentProbe, 'AgentProbe');

/** Options of an HTTP GET hook. */
export interface AgentHttpHandlerOptions {
  /**
   * The port.
   * @default - the container's first port
   */
  readonly port?: number;
}

/** Options of a TCP hook. */
export interface AgentTcpHandlerOptions {
  /**
   * The port.
   * @default - the container's first port
   */
  readonly port?: number;
  /**
   * The host.
   * @default - the pod's IP address
   */
  readonly host?: string;
}

/** A container lifecycle hook (preStop). */
export class AgentHandler {
  /** A command run in the container. */
  public static fromCommand(command: string[]): AgentHandler {
    checkArgs('AgentHandler.fromCommand', [command]);
    return new AgentHandler(() => kplus.Handler.fromCommand(command));
  }

  /** An HTTP GET of `path`. */
  public static fromHttpGet(path: string, options: AgentHttpHandlerOptions = {}): AgentHandler {
    checkArgs('AgentHandler.fromHttpGet', [path, options]);
    return new AgentHandler(() => kplus.Handler.fromHttpGet(path, options));
  }

  /** A TCP connection to the port. */
  public static fromTcpSocket(options: AgentTcpHandlerOptions = {}): AgentHandler {
    checkArgs('AgentHandler.fromTcpSocket', [options]);
    return new AgentHandler(() => kplus.Handler.fromTcpSocket(options));
  }

  private constructor(private readonly make: () => kplus.Handler) {}

  /** @internal */
  public _toKplus(): kplus.Handler {
    return this.make();
  }
}
brand(AgentHandler, 'AgentHandler');
