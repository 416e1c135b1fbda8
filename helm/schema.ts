/**
 * Writes every chart's values.schema.json from one description, and the
 * values table in docs/kubernetes.md from the same, so the charts, their
 * schemas and the docs cannot drift apart. `deno run -A helm/schema.ts`
 * writes them; `--check` fails when a written file is not current (the test
 * suite runs it).
 */
import { generatedFiles } from "./generated.ts";

type Schema = Record<string, unknown>;

const described = (schema: Schema, description: string): Schema => ({ ...schema, description });
const str = (description: string, extra: Schema = {}) =>
  described({ type: "string", ...extra }, description);
const int = (description: string, minimum: number, maximum?: number) =>
  described(
    { type: "integer", minimum, ...(maximum === undefined ? {} : { maximum }) },
    description,
  );
const bool = (description: string) => described({ type: "boolean" }, description);
/** An object of ours: every property named, nothing else accepted. */
const obj = (description: string, properties: Record<string, Schema>): Schema =>
  described({ type: "object", additionalProperties: false, properties }, description);
/** A Kubernetes structure passed through as it is. */
const passthrough = (description: string, type: "object" | "array" = "object") =>
  described({ type }, description);
const settings = (description: string) =>
  described(
    { type: "object", additionalProperties: { type: ["string", "number", "boolean"] } },
    description,
  );
const peers = (description: string) =>
  described({ type: "array", items: { type: "object" } }, description);

const connection = (what: string, key: string, url: Schema, more: Record<string, Schema> = {}) =>
  obj(`${what}: a URL kept in the release's Secret, or an existing Secret`, {
    ...url,
    existingSecret: str(`an existing Secret holding the ${what} setting; wins over the URL`),
    existingSecretKey: str(`the key in existingSecret`, { minLength: 1, default: key }),
    ...more,
  });

const token = (what: string, value: string, key: string) =>
  obj(what, {
    value: str(value),
    existingSecret: str("an existing Secret holding the token; wins over value"),
    existingSecretKey: str("the key in existingSecret", { minLength: 1, default: key }),
  });

const POSTGRES_URL = "^(postgres(ql)?://.+)?$";
/** Kubernetes' own structures, passed through: a list of volumes or of volume mounts. */
const volumes = (description: string) =>
  described({ type: "array", items: { type: "object", required: ["name"] } }, description);
const mounts = (description: string) =>
  described(
    { type: "array", items: { type: "object", required: ["name", "mountPath"] } },
    description,
  );
const labels = (description: string) =>
  described({ type: "object", additionalProperties: { type: "string" } }, description);
const DIGEST = { pattern: "^(sha256:[0-9a-f]{64})?$" };

const GLOBAL = obj("settings every chart of the release shares", {
  image: obj("the image of every pod, when set", {
    repository: str("image repository, e.g. registry.example.com/crm"),
    tag: str("image tag; empty: the chart's appVersion"),
    digest: str("image digest (sha256:...); when set the image is pulled by it", DIGEST),
  }),
  imagePullSecrets: peers("imagePullSecrets of every pod"),
  priorityClassName: str("every pod's priorityClassName (a chart's own wins); empty: none"),
  podLabels: labels("labels of every pod, besides the chart's own (which win)"),
  extraVolumes: volumes("volumes of every pod, e.g. a CA bundle or a GeoIP database"),
  extraVolumeMounts: mounts("mounts of every container, e.g. the CA at /etc/crm/ca"),
  publicUrl: str(
    "PUBLIC_URL (gateway, auth, ingest): the public base URL, in share links and mails; empty: the gateway's own",
    { pattern: "^(https?://.+)?$" },
  ),
  reports: obj("reports, funnels and exports (ingest)", {
    poolSize: int("REPORT_POOL_SIZE: connections kept apart for them", 1, 1000),
    timeoutMs: int(
      "REPORT_TIMEOUT_MS: the longest one may run (the gateway waits as long)",
      100,
      3600000,
    ),
  }),
  ports: obj("ports the services listen on", {
    http: int("the gateway's HTTP port", 1, 65535),
    grpc: int("the internal services' gRPC port", 1, 65535),
  }),
  logLevel: str("log level of every service", { enum: ["debug", "info", "warn", "error"] }),
  postgres: connection("Postgres", "database-url", {
    url: str("DATABASE_URL: postgres://USER:PASSWORD@HOST:5432/DB", { pattern: POSTGRES_URL }),
  }, {
    poolSize: int("DATABASE_POOL_SIZE: connections a service opens for its write path", 1, 1000),
    read: connection("the read replica (DATABASE_READ_URL, ingest only)", "database-read-url", {
      url: str(
        "DATABASE_READ_URL: a streaming replica for reports and exports, e.g. CloudNativePG's -ro Service; empty: none",
        { pattern: POSTGRES_URL },
      ),
    }),
  }),
  redis: connection("Redis", "redis-url", {
    url: str("REDIS_URL: redis://[:PASSWORD@]HOST:6379", { pattern: "^(rediss?://.+)?$" }),
    keyPrefix: str("REDIS_KEY_PREFIX, so releases can share a Redis; empty: crm:"),
  }),
  adminToken: obj("ADMIN_TOKEN, required on every admin call", {
    ...(token(
      "",
      "the token; empty: generated once by helm install and kept (helm template: set this or existingSecret)",
      "admin-token",
    ).properties as Record<string, Schema>),
    next: token(
      "ADMIN_TOKEN_NEXT: a second accepted token while the token is rotated",
      "the next token; empty: none",
      "admin-token-next",
    ),
  }),
  smtp: connection("SMTP (ingest's email reports and traffic alerts)", "smtp-url", {
    url: str("SMTP_URL: smtp://[USER:PASSWORD@]HOST:PORT or smtps://...; empty: no mail", {
      pattern: "^(smtps?://.+)?$",
    }),
  }, {
    from: str("MAIL_FROM: the sender; empty: reports@ and PUBLIC_URL's host"),
  }),
  otel: obj("OpenTelemetry export (docs/observability.md)", {
    endpoint: str("OTEL_EXPORTER_OTLP_ENDPOINT, the collector's OTLP/HTTP URL; empty: none", {
      pattern: "^(https?://.+)?$",
    }),
    protocol: str("OTEL_EXPORTER_OTLP_PROTOCOL", { enum: ["http/protobuf", "http/json"] }),
    sampler: str("OTEL_TRACES_SAMPLER", {
      enum: [
        "always_on",
        "always_off",
        "traceidratio",
        "parentbased_always_on",
        "parentbased_always_off",
        "parentbased_traceidratio",
      ],
    }),
    samplerArg: str("OTEL_TRACES_SAMPLER_ARG: the ratio of new traces sampled, e.g. 0.1", {
      pattern: "^(0(\\.\\d+)?|1(\\.0+)?)$",
    }),
    resourceAttributes: str(
      "more OTEL_RESOURCE_ATTRIBUTES, e.g. deployment.environment=prod (the pod's own are always set)",
    ),
    batch: obj("batches of spans and log records", {
      scheduleDelayMs: int("OTEL_BSP_SCHEDULE_DELAY and OTEL_BLRP_SCHEDULE_DELAY, ms", 100, 600000),
      maxExportBatchSize: int("OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans in one export", 1, 100000),
      maxQueueSize: int("OTEL_BSP_MAX_QUEUE_SIZE: spans waiting; more are dropped", 1, 1000000),
    }),
    metricExportIntervalMs: int("OTEL_METRIC_EXPORT_INTERVAL, ms", 1000, 3600000),
  }),
  networkPolicy: obj("NetworkPolicies: default deny, then what each component needs", {
    enabled: bool("render the policies"),
    gatewayFrom: peers(
      "peers allowed to reach the gateway (e.g. the ingress controller); empty: anyone",
    ),
    probesFrom: peers("peers the kubelet's probes come from, where the network plugin needs it"),
    dnsTo: peers("where DNS is; empty: any address on port 53"),
    postgres: obj("egress to Postgres", {
      port: int("Postgres port", 1, 65535),
      to: peers("Postgres peers; empty: any address on the port"),
    }),
    redis: obj("egress to Redis", {
      port: int("Redis port", 1, 65535),
      to: peers("Redis peers; empty: any address on the port"),
    }),
    collector: obj("egress to the telemetry collector (when otel.endpoint is set)", {
      port: int("collector port", 1, 65535),
      to: peers("collector peers; empty: any address on the port"),
    }),
    webhooks: obj("egress of content and ingest to the sites' webhook receivers", {
      ports: described(
        { type: "array", items: { type: "integer", minimum: 1, maximum: 65535 } },
        "receiver ports (443; add 80 for http URLs with WEBHOOK_ALLOW_INSECURE=1)",
      ),
      to: peers("receiver peers; empty: any address outside the private and link-local ranges"),
    }),
  }),
  retention: obj("the daily retention CronJob (admin retention run)", {
    enabled: bool("run it"),
    schedule: str("cron schedule", { minLength: 9 }),
    timeZone: str("time zone of the schedule, e.g. Europe/Berlin; empty: the controller's"),
    days: described(
      { type: ["string", "integer"], pattern: "^\\d*$" },
      "RETENTION_DAYS for the job; empty: the default",
    ),
  }),
  adminJobs: obj("the migration Job, the retention CronJob and the test", {
    resources: passthrough("their container resources"),
    serviceAccountName: str("their service account; empty: the namespace's default (no token)"),
  }),
  env: settings("settings given to every container (e.g. RATE_LIMIT_CONTENT_PER_IP)"),
  releaseObjectsBy: str("the chart that renders the release-wide objects; empty: this one"),
});

function serviceProperties(component: string): Record<string, Schema> {
  const properties: Record<string, Schema> = {
    component: str("the component this chart runs", { enum: [component] }),
    image: obj("the image", {
      repository: str("image repository", { minLength: 1 }),
      tag: str("image tag; empty: the chart's appVersion"),
      digest: str("image digest (sha256:...); when set the image is pulled by it", DIGEST),
      pullPolicy: str("imagePullPolicy", { enum: ["Always", "IfNotPresent", "Never"] }),
    }),
    replicaCount: int("replicas when autoscaling is off", 0, 100),
    resources: passthrough("container resources (requests and limits)"),
    logLevel: str("this service's log level; empty: global.logLevel", {
      enum: ["", "debug", "info", "warn", "error"],
    }),
    env: settings("settings for this service only"),
    podAnnotations: passthrough("pod annotations"),
    podLabels: labels("pod labels, besides the chart's own (which win)"),
    priorityClassName: str("the pods' priorityClassName; empty: global.priorityClassName"),
    serviceAccount: obj("the pods' service account", {
      create: bool("create one for this service"),
      name: str("its name; empty: RELEASE-COMPONENT when created, else the namespace's default"),
      annotations: passthrough("its annotations (e.g. a cloud identity)"),
      automount: bool("mount its Kubernetes API token in the pods (the services need none)"),
    }),
    extraVolumes: volumes("more volumes of the pods"),
    extraVolumeMounts: mounts("more mounts of the container"),
    nodeSelector: passthrough("nodeSelector"),
    tolerations: passthrough("tolerations", "array"),
    affinity: passthrough("affinity; wins over podAntiAffinityPreset"),
    podAntiAffinityPreset: str("replicas on different nodes: soft (preferred), hard (required)", {
      enum: ["", "soft", "hard"],
    }),
    terminationGracePeriodSeconds: int("seconds a pod has to drain after SIGTERM", 1, 3600),
    livenessProbe: obj("the liveness probe: does the event loop answer", {
      periodSeconds: int("seconds between checks", 1, 300),
      timeoutSeconds: int("seconds an answer may take", 1, 60),
      failureThreshold: int("failed checks in a row before the container restarts", 1, 30),
      terminationGracePeriodSeconds: int("seconds a container that failed it has to stop", 1, 3600),
    }),
    preStopSleepSeconds: int(
      "seconds a stopping pod keeps serving while endpoints drop it",
      0,
      120,
    ),
    pdb: obj("PodDisruptionBudget", {
      enabled: bool("render it"),
      minAvailable: described({ type: ["integer", "string"] }, "pods kept during a disruption"),
    }),
    autoscaling: obj("HorizontalPodAutoscaler on CPU", {
      enabled: bool("render it (replicaCount is then ignored)"),
      minReplicas: int("fewest replicas", 1, 100),
      maxReplicas: int("most replicas", 1, 1000),
      targetCPUUtilizationPercentage: int("CPU use to aim for, percent of requests", 1, 100),
    }),
    topologySpread: obj("spreading replicas over zones or nodes", {
      enabled: bool("render the constraint"),
      maxSkew: int("maxSkew", 1),
      topologyKey: str("topologyKey", { minLength: 1 }),
      whenUnsatisfiable: str("whenUnsatisfiable", { enum: ["DoNotSchedule", "ScheduleAnyway"] }),
    }),
    global: GLOBAL,
    "crm-lib": passthrough("the shared template library's values (none)"),
  };
  if (component === "gateway") {
    properties.trustProxy = int("TRUST_PROXY: reverse proxies in front of the gateway", 0, 32);
    properties.traceTrustParent = bool(
      "TRACE_TRUST_PARENT: honour an incoming traceparent's sampled flag (false: sample at the gateway's own ratio)",
    );
    properties.ingress = obj("an Ingress for the gateway", {
      enabled: bool("render it"),
      className: str("ingressClassName"),
      host: str("the host name", { minLength: 1 }),
      annotations: passthrough("Ingress annotations"),
      tlsSecretName: str("a TLS Secret for the host; empty: no TLS"),
    });
  } else {
    properties.grpcService = str("the gRPC health service the readiness probe asks about", {
      minLength: 1,
    });
  }
  if (component === "ingest") {
    properties.referrerBlocklist = obj("REFERRER_BLOCKLIST: referrer hosts dropped as spam", {
      hosts: described(
        { type: "array", items: { type: "string", pattern: "^[^\\s#]+$" } },
        "host names (a name covers its subdomains), kept in a ConfigMap of the release",
      ),
      existingConfigMap: str("an existing ConfigMap holding the list; wins over hosts"),
      existingConfigMapKey: str("the key in existingConfigMap", { minLength: 1 }),
    });
  }
  return properties;
}

const root = (properties: Record<string, Schema>): Schema => ({
  $schema: "https://json-schema.org/draft-07/schema#",
  type: "object",
  additionalProperties: false,
  properties,
});

/** Each service's section in the umbrella: the service chart's values, all optional. */
function subchart(component: string): Schema {
  const { global: _global, "crm-lib": _lib, ...rest } = serviceProperties(component);
  // Helm checks the parent's schema against the merged values: the
  // subchart's own component and its copy of global are in them.
  return obj(`the ${component} chart's values (helm/${component}/values.yaml)`, {
    ...rest,
    global: passthrough("global, as the subchart sees it (checked by the subchart's schema)"),
    "crm-lib": passthrough("the shared template library's values (none)"),
  });
}

export const SCHEMAS: Record<string, Schema> = {
  gateway: root(serviceProperties("gateway")),
  auth: root(serviceProperties("auth")),
  content: root(serviceProperties("content")),
  ingest: root(serviceProperties("ingest")),
  crm: root({
    component: str("the component of the release-wide pods", { enum: ["admin"] }),
    image: serviceProperties("admin").image,
    monitoring: obj("alerts and dashboards (docs/observability.md)", {
      prometheusRule: obj("the SLO and cause alerts as a PrometheusRule (Prometheus operator)", {
        enabled: bool("render it"),
        labels: passthrough("labels the operator's ruleSelector matches"),
        runbookBaseUrl: str("where docs/runbooks/ is published, ending in /; empty: the path", {
          pattern: "^(https?://.+/)?$",
        }),
      }),
      dashboards: obj("the Grafana dashboards as a ConfigMap for Grafana's sidecar", {
        enabled: bool("render it"),
        labels: passthrough('labels the sidecar watches (grafana_dashboard: "1")'),
        annotations: passthrough("ConfigMap annotations, e.g. grafana_folder"),
      }),
    }),
    gateway: subchart("gateway"),
    auth: subchart("auth"),
    content: subchart("content"),
    ingest: subchart("ingest"),
    global: GLOBAL,
    "crm-lib": passthrough("the shared template library's values (none)"),
  }),
};

/** Rows `name | type | description` for every leaf of a schema. */
function rows(schema: Schema, path: string[] = []): string[] {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (schema.type === "object" && properties && path.length < 4) {
    return Object.entries(properties).flatMap(([name, child]) => rows(child, [...path, name]));
  }
  const type = Array.isArray(schema.type) ? schema.type.join(" or ") : String(schema.type);
  const rules = [
    schema.enum
      ? `one of ${(schema.enum as string[]).map((v) => `\`${v || '""'}\``).join(", ")}`
      : "",
    schema.minimum !== undefined ? `≥ ${schema.minimum}` : "",
    schema.maximum !== undefined ? `≤ ${schema.maximum}` : "",
  ].filter(Boolean).join(", ");
  return [
    `| \`${path.join(".")}\` | ${type} | ${schema.description ?? ""}${
      rules ? ` (${rules})` : ""
    } |`,
  ];
}

export function valuesTable(): string {
  const umbrella = SCHEMAS.crm;
  const lines = [
    "| value | type | meaning |",
    "| --- | --- | --- |",
    ...rows(umbrella).filter((row) =>
      !/^\| `([a-z]+\.)?(component|crm-lib|global)`/.test(row) || row.startsWith("| `global.")
    ),
  ];
  return lines.join("\n");
}

const START = "<!-- helm values: generated by helm/schema.ts -->";
const END = "<!-- end of helm values -->";

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  const here = new URL(".", import.meta.url);
  const { write, stale } = generatedFiles(check);
  for (const [chart, schema] of Object.entries(SCHEMAS)) {
    await write(
      new URL(`${chart}/values.schema.json`, here),
      JSON.stringify(schema, null, 2) + "\n",
    );
  }
  const docs = new URL("../docs/kubernetes.md", here);
  const text = await Deno.readTextFile(docs);
  const from = text.indexOf(START);
  const to = text.indexOf(END);
  if (from < 0 || to < 0) {
    throw new Error(`docs/kubernetes.md lacks the markers ${START} ... ${END}`);
  }
  const table = await formatMarkdown(valuesTable());
  await write(docs, text.slice(0, from + START.length) + "\n\n" + table + "\n" + text.slice(to));
  if (stale.length) {
    console.error(`not current (run deno run -A helm/schema.ts): ${stale.join(", ")}`);
    Deno.exit(1);
  }
}

/** The table as deno fmt writes it, so fmt --check and --check agree. */
async function formatMarkdown(markdown: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext", "md", "-"],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(markdown + "\n"));
  await writer.close();
  const { stdout } = await child.output();
  return new TextDecoder().decode(stdout).trimEnd() + "\n";
}
