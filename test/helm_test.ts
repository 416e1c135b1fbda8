/**
 * The charts, proven with the real tools (built by .ci/tools.sh): schemas
 * current, `helm lint --strict` on every chart, the umbrella rendered with
 * its defaults and every file under helm/crm/ci/ and validated against the
 * schemas of Kubernetes 1.37 (dumped from the API server into
 * helm/kube-openapi/), wrong values refused. Installed, tested, upgraded
 * and uninstalled on a real node: test/realnode/.
 */
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { haveTools, tool } from "./helpers/tools.ts";
import { runCommand } from "./helpers/process.ts";
import { RETENTION_TIMEOUT_MS } from "../services/cli/analytics_commands.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const CHARTS = ["crm", "gateway", "auth", "content", "ingest"];
const CI_VALUES = [...Deno.readDirSync(`${ROOT}helm/crm/ci`)].map((e) => e.name).sort();
const SCHEMAS = `${ROOT}helm/kube-openapi/v1.37`;

/** A command's result; env is passed on as it is. */
const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  runCommand(command, args, { env });

// deno-lint-ignore no-explicit-any
type Obj = any;

/** A pod's secret files: file name → the Secret and key it is projected from. */
function projected(pod: Obj): Record<string, { secret: string; key: string }> {
  const volume = (pod.volumes ?? []).find((v: Obj) => v.name === "secrets");
  if (!volume) return {};
  return Object.fromEntries(
    volume.projected.sources.flatMap((source: Obj) =>
      source.secret.items.map((item: Obj) => [
        item.path,
        { secret: source.secret.name, key: item.key },
      ])
    ),
  );
}

/** Each container of a rendering by its name (the component, or migrate, retention, healthz). */
function containers(all: Obj[]): Record<string, { pod: Obj; container: Obj; template: Obj }> {
  const found: Record<string, { pod: Obj; container: Obj; template: Obj }> = {};
  for (const o of all) {
    const template = o.kind === "Deployment" || o.kind === "Job"
      ? o.spec.template
      : o.kind === "CronJob"
      ? o.spec.jobTemplate.spec.template
      : o.kind === "Pod"
      ? o
      : undefined;
    if (!template) continue;
    for (const container of template.spec.containers) {
      found[container.name] = { pod: template.spec, container, template };
    }
  }
  return found;
}

/** The objects of a multi-document YAML stream. */
function objects(yaml: string): Obj[] {
  return parseAllDocuments(yaml).map((d: { toJS(): Obj }) => d.toJS()).filter(Boolean);
}

describe.runIf(haveTools("helm", "kubectl-validate", "promtool"))("helm charts", () => {
  const helm = (args: string[]) => run(tool("helm")!, args);

  it("have schemas and a values table generated from the current description", async () => {
    const check = await run(Deno.execPath(), ["run", "-A", "helm/schema.ts", "--check"]);
    expect(check.code, check.stderr).toBe(0);
  });

  it("pass helm lint --strict", async () => {
    for (const chart of CHARTS) {
      const lint = await helm(["lint", "--strict", `helm/${chart}`]);
      expect(lint.code, `${chart}: ${lint.stdout}${lint.stderr}`).toBe(0);
      expect(lint.stdout).toContain("0 chart(s) failed");
    }
  });

  it("render valid Kubernetes 1.37 objects with the defaults and every ci values file", async () => {
    const dir = await Deno.makeTempDir({ prefix: "crm-helm-" });
    try {
      const files: string[] = [];
      for (const values of [undefined, ...CI_VALUES]) {
        const args = [
          "template",
          "r1",
          "helm/crm",
          ...(values ? ["-f", `helm/crm/ci/${values}`] : []),
        ];
        const rendered = await helm(args);
        expect(rendered.code, rendered.stderr).toBe(0);
        const file = `${dir}/${values ?? "defaults.yaml"}`;
        // The Prometheus operator's PrometheusRule is no Kubernetes kind:
        // its rules are checked with promtool, the rest against the schemas.
        const all = objects(rendered.stdout);
        const rules = all.filter((o) => o.kind === "PrometheusRule");
        await Deno.writeTextFile(
          file,
          all.filter((o) => o.kind !== "PrometheusRule").map((o) => stringify(o)).join("---\n"),
        );
        files.push(file);
        for (const rule of rules) {
          await Deno.writeTextFile(`${file}.rules.yaml`, stringify(rule.spec));
          const checked = await run(tool("promtool")!, ["check", "rules", `${file}.rules.yaml`]);
          expect(checked.code, checked.stdout + checked.stderr).toBe(0);
        }
        const kinds = all.map((o) => o.kind);
        for (const kind of ["Deployment", "Service", "Job", "Pod", "ServiceAccount"]) {
          expect(kinds).toContain(kind);
        }
        // The release keeps a Secret of its own unless every secret setting names an existing one.
        expect(kinds.includes("Secret"), values ?? "defaults").toBe(values !== "production.yaml");
      }
      const validated = await run(tool("kubectl-validate")!, [
        ...files,
        "--local-schemas",
        SCHEMAS,
      ]);
      expect(validated.code, validated.stdout + validated.stderr).toBe(0);
      expect(validated.stdout.match(/OK/g)).toHaveLength(files.length);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });

  it("harden every pod and wire the production values through", async () => {
    const rendered = await helm([
      "template",
      "r1",
      "helm/crm",
      "-f",
      "helm/crm/ci/production.yaml",
    ]);
    const all = objects(rendered.stdout);
    const pods = all.flatMap((o) => {
      if (o.kind === "Deployment" || o.kind === "Job") return [o.spec.template.spec];
      if (o.kind === "CronJob") return [o.spec.jobTemplate.spec.template.spec];
      if (o.kind === "Pod") return [o.spec];
      return [];
    });
    expect(pods).toHaveLength(7);
    for (const pod of pods) {
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(pod.priorityClassName).toMatch(/^crm-(critical|ingest)$/);
      for (const container of pod.containers) {
        expect(container.image).toMatch(
          /^registry\.example\.com\/crm(:1\.0\.0|@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef)$/,
        );
        // The CA for sslmode=verify-full, in every container.
        expect(container.volumeMounts).toContainEqual({
          name: "postgres-ca",
          mountPath: "/etc/crm/postgres-ca",
          readOnly: true,
        });
        expect(container.securityContext).toMatchObject({
          runAsNonRoot: true,
          runAsUser: 10001,
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
        });
      }
    }
    const named = (kind: string, name: string) =>
      all.find((o) => o.kind === kind && o.metadata.name === name);
    expect(named("HorizontalPodAutoscaler", "r1-gateway").spec.minReplicas).toBe(3);
    expect(named("PodDisruptionBudget", "r1-ingest").spec.minAvailable).toBe("50%");
    expect(named("Ingress", "r1-gateway").spec.tls[0].secretName).toBe("crm-example-com-tls");
    const gateway = named("Deployment", "r1-gateway").spec.template.spec;
    expect(gateway.topologySpreadConstraints[0].topologyKey).toBe("topology.kubernetes.io/zone");
    expect(gateway.containers[0].image).toBe(
      "registry.example.com/crm@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    );
    const env = Object.fromEntries(gateway.containers[0].env.map((e: Obj) => [e.name, e]));
    expect(env.AUTH_URL.value).toBe("http://r1-auth:50051");
    expect(env.PUBLIC_URL.value).toBe("https://crm.example.com");
    // Existing Secrets, each projected as the one file the pod reads.
    expect(projected(gateway)).toEqual({ "redis-url": { secret: "crm-redis", key: "url" } });
    const ingest = named("Deployment", "r1-ingest").spec.template.spec;
    expect(projected(ingest)).toEqual({
      "database-url": { secret: "crm-postgres", key: "url" },
      "database-read-url": { secret: "crm-postgres-ro", key: "url" },
      "redis-url": { secret: "crm-redis", key: "url" },
      "admin-token": { secret: "crm-admin", key: "token" },
      "admin-token-next": { secret: "crm-admin-next", key: "token" },
      "smtp-url": { secret: "crm-smtp", key: "url" },
    });
    const ingestEnv = Object.fromEntries(ingest.containers[0].env.map((e: Obj) => [e.name, e]));
    expect(ingestEnv.DATABASE_READ_URL_FILE.value).toBe("/var/run/secrets/crm/database-read-url");
    expect(ingestEnv.DATABASE_POOL_SIZE.value).toBe("20");
    expect(ingestEnv.REPORT_POOL_SIZE.value).toBe("8");
    expect(ingestEnv.REPORT_TIMEOUT_MS.value).toBe("20000");
    expect(ingestEnv.MAIL_FROM.value).toBe("CRM reports <reports@example.com>");
    expect(ingestEnv.GEOIP_DB.value).toBe("/etc/crm/geoip/GeoLite2-City.mmdb");
    expect(ingestEnv.REFERRER_BLOCKLIST.value).toBe("/etc/crm/referrer-blocklist/referrers.txt");
    expect(named("ConfigMap", "r1-referrer-blocklist").data["referrers.txt"])
      .toBe("spam.example\nseo-offers.example\n");
    expect(ingest.volumes).toContainEqual({
      name: "geoip",
      persistentVolumeClaim: { claimName: "geoip" },
    });
    expect(ingest.priorityClassName).toBe("crm-ingest");
    expect(named("Deployment", "r1-ingest").spec.template.metadata.labels).toMatchObject({
      team: "web",
      tier: "write",
      "app.kubernetes.io/component": "ingest",
    });
    expect(ingest.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0])
      .toMatchObject({ topologyKey: "kubernetes.io/hostname" });
    expect(gateway.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0])
      .toMatchObject({ weight: 100, podAffinityTerm: { topologyKey: "kubernetes.io/hostname" } });
    const account = named("ServiceAccount", "r1-gateway");
    expect(account.metadata.annotations).toEqual({ "iam.example.com/role": "crm-gateway" });
    expect(account.automountServiceAccountToken).toBe(false);
    expect(gateway.serviceAccountName).toBe("r1-gateway");
    // With every secret in an existing Secret the release keeps none.
    expect(all.filter((o) => o.kind === "Secret")).toEqual([]);
    const auth = named("Deployment", "r1-auth").spec.template.spec.containers[0];
    expect(auth.readinessProbe.grpc).toEqual({ port: 50051, service: "crm.auth.v1.AuthService" });
    expect(gateway.containers[0].readinessProbe.httpGet.path).toBe("/healthz");
    const authPolicy = named("NetworkPolicy", "r1-auth").spec;
    expect(
      authPolicy.ingress[0].from.map((p: Obj) =>
        p.podSelector.matchLabels["app.kubernetes.io/component"]
      ),
    )
      .toEqual(["gateway", "admin"]);
    expect(named("NetworkPolicy", "r1-default-deny").spec.policyTypes).toEqual([
      "Ingress",
      "Egress",
    ]);
  });

  it("give the retention Job no shorter a deadline than the call it makes", async () => {
    const rendered = await helm(["template", "r1", "helm/crm"]);
    expect(rendered.code, rendered.stderr).toBe(0);
    const [cron] = objects(rendered.stdout).filter((o) => o.kind === "CronJob");
    const job = cron.spec.jobTemplate.spec;
    expect(job.template.spec.containers[0].args).toEqual(["admin", "retention", "run"]);
    // The call's own wait, plus the pod's start: the Job never ends a run still working.
    expect(job.activeDeadlineSeconds * 1000).toBeGreaterThan(RETENTION_TIMEOUT_MS);
  });

  it("wire probes, sampling, the pod's telemetry identity and monitoring through", async () => {
    const rendered = await helm([
      "template",
      "r1",
      "helm/crm",
      "-f",
      "helm/crm/ci/telemetry.yaml",
      "-f",
      "helm/crm/ci/monitoring.yaml",
    ]);
    expect(rendered.code, rendered.stderr).toBe(0);
    const all = objects(rendered.stdout);
    const named = (kind: string, name: string) =>
      all.find((o) => o.kind === kind && o.metadata.name === name);
    for (const component of ["gateway", "auth", "content", "ingest"]) {
      const container = named("Deployment", `r1-${component}`).spec.template.spec.containers[0];
      for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"]) {
        expect(container[probe].timeoutSeconds, `${component} ${probe}`).toBe(2);
      }
      const env = Object.fromEntries(container.env.map((e: Obj) => [e.name, e]));
      expect(env.OTEL_TRACES_SAMPLER.value).toBe("parentbased_traceidratio");
      expect(env.OTEL_TRACES_SAMPLER_ARG.value).toBe("0.1");
      expect(env.OTEL_BSP_SCHEDULE_DELAY.value).toBe("5000");
      expect(env.OTEL_METRIC_EXPORT_INTERVAL.value).toBe("60000");
      expect(env.K8S_POD_UID.valueFrom.fieldRef.fieldPath).toBe("metadata.uid");
      const attributes = Object.fromEntries(
        env.OTEL_RESOURCE_ATTRIBUTES.value.split(",").map((pair: string) => pair.split("=")),
      );
      expect(attributes).toEqual({
        "service.instance.id": "$(K8S_POD_UID)",
        "service.version": "dev",
        "service.namespace": "r1",
        "k8s.namespace.name": "$(K8S_NAMESPACE_NAME)",
        "k8s.pod.name": "$(K8S_POD_NAME)",
        "k8s.pod.uid": "$(K8S_POD_UID)",
        "k8s.node.name": "$(K8S_NODE_NAME)",
        "k8s.container.name": component,
        "k8s.deployment.name": `r1-${component}`,
        "deployment.environment": "staging",
      });
      // The kubelet expands $(VAR) only from variables defined before it.
      const order = container.env.map((e: Obj) => e.name);
      expect(order.indexOf("K8S_NODE_NAME")).toBeLessThan(
        order.indexOf("OTEL_RESOURCE_ATTRIBUTES"),
      );
    }
    expect(named("Deployment", "r1-gateway").spec.template.spec.containers[0].readinessProbe)
      .toMatchObject({ httpGet: { path: "/healthz" }, periodSeconds: 5, failureThreshold: 2 });

    const rule = named("PrometheusRule", "r1-crm");
    expect(rule.metadata.labels.release).toBe("kube-prometheus-stack");
    const shipped = [
      ...parse(Deno.readTextFileSync(`${ROOT}helm/crm/monitoring/slo-rules.yaml`)).groups,
      ...parse(Deno.readTextFileSync(`${ROOT}helm/crm/monitoring/alerts.yaml`)).groups,
    ];
    expect(rule.spec.groups.map((g: Obj) => g.name)).toEqual(shipped.map((g: Obj) => g.name));
    const runbooks = rule.spec.groups.flatMap((g: Obj) => g.rules)
      .filter((r: Obj) => r.alert).map((r: Obj) => r.annotations.runbook_url);
    expect(runbooks.length).toBeGreaterThan(0);
    for (const url of runbooks) {
      expect(url).toMatch(/^https:\/\/crm\.example\.com\/ops\/docs\/runbooks\/[a-z-]+\.md$/);
    }
    // Each release's rules read its own series: every matcher that takes any release in the
    // shipped files names this one (helm template's namespace is "default").
    const exprs = rule.spec.groups.flatMap((g: Obj) => g.rules).map((r: Obj) => r.expr as string);
    const shippedExprs = shipped.flatMap((g: Obj) => g.rules).map((r: Obj) => r.expr as string);
    expect(exprs.length).toBe(shippedExprs.length);
    for (const [i, expr] of exprs.entries()) {
      expect(expr).not.toMatch(/=~"\.\*"|"\.\+-/);
      const count = (text: string, what: RegExp) => text.match(what)?.length ?? 0;
      expect(count(expr, /service_namespace="r1"/g)).toBe(
        count(shippedExprs[i], /service_namespace=~"\.\*"/g),
      );
      expect(count(expr, /k8s_namespace_name="default"/g)).toBe(
        count(shippedExprs[i], /k8s_namespace_name=~"\.\*"/g),
      );
    }
    expect(exprs.join("\n")).toContain('job_name="r1-migrate"');
    expect(exprs.join("\n")).toContain('job_name=~"r1-retention-.+"');
    // Without the retention CronJob, no retention alerts.
    const noRetention = await render(
      "-f",
      "helm/crm/ci/monitoring.yaml",
      "--set",
      "global.retention.enabled=false",
    );
    const kept = noRetention.find((o) => o.kind === "PrometheusRule").spec.groups
      .map((g: Obj) => g.name);
    expect(kept).toEqual(
      shipped.map((g: Obj) => g.name).filter((n: string) => n !== "crm-retention"),
    );
    const dashboards = named("ConfigMap", "r1-crm-dashboards");
    expect(dashboards.metadata.labels.grafana_dashboard).toBe("1");
    expect(dashboards.metadata.annotations.grafana_folder).toBe("CRM");
    for (const name of Object.keys(dashboards.data)) {
      expect(dashboards.data[name]).toBe(
        Deno.readTextFileSync(`${ROOT}helm/crm/monitoring/dashboards/${name}`),
      );
    }
    expect(Object.keys(dashboards.data).sort()).toEqual(
      [...Deno.readDirSync(`${ROOT}helm/crm/monitoring/dashboards`)].map((e) => e.name).sort(),
    );
    // Off by default.
    const defaults = objects((await helm(["template", "r1", "helm/crm"])).stdout);
    expect(defaults.map((o) => o.kind)).not.toContain("PrometheusRule");
    expect(defaults.find((o) => o.metadata?.name === "r1-crm-dashboards")).toBeUndefined();
  });

  const render = async (...args: string[]) => {
    const rendered = await helm(["template", "r1", "helm/crm", ...args]);
    expect(rendered.code, rendered.stderr).toBe(0);
    return objects(rendered.stdout);
  };
  const SECRET_NAMES = [
    "DATABASE_URL",
    "DATABASE_READ_URL",
    "REDIS_URL",
    "ADMIN_TOKEN",
    "ADMIN_TOKEN_NEXT",
    "SMTP_URL",
  ];

  it("give each component only its own secret settings, as files", async () => {
    const all = await render(
      "--set",
      "global.postgres.read.url=postgres://crm:pw@crm-db-ro:5432/crm",
      "--set",
      "global.adminToken.value=first-token",
      "--set",
      "global.adminToken.next.value=second-token",
      "--set",
      "global.smtp.url=smtp://mailer:pw@smtp.example:587",
    );
    const wanted: Record<string, string[]> = {
      gateway: ["REDIS_URL"],
      auth: ["DATABASE_URL", "REDIS_URL", "ADMIN_TOKEN", "ADMIN_TOKEN_NEXT"],
      content: ["DATABASE_URL", "REDIS_URL", "ADMIN_TOKEN", "ADMIN_TOKEN_NEXT"],
      ingest: [...SECRET_NAMES],
      migrate: ["DATABASE_URL"],
      retention: ["ADMIN_TOKEN"],
      healthz: [],
    };
    const found = containers(all);
    expect(Object.keys(found).sort()).toEqual(Object.keys(wanted).sort());
    const secretValues = ["pw@", "first-token", "second-token"];
    for (const [name, { pod, container }] of Object.entries(found)) {
      const env = container.env ?? [];
      // No secret as a plain variable or a secretKeyRef: only NAME_FILE.
      for (const entry of env) {
        expect(SECRET_NAMES, `${name}: ${entry.name}`).not.toContain(entry.name);
        expect(entry.valueFrom?.secretKeyRef, `${name}: ${entry.name}`).toBeUndefined();
        for (const value of secretValues) {
          expect(String(entry.value ?? ""), `${name}: ${entry.name}`).not.toContain(value);
        }
      }
      const files = env.filter((e: Obj) => e.name.endsWith("_FILE"));
      expect(files.map((e: Obj) => e.name.slice(0, -5)).sort(), name)
        .toEqual([...wanted[name]].sort());
      const mounted = projected(pod ?? {});
      for (const entry of files) {
        expect(entry.value).toMatch(/^\/var\/run\/secrets\/crm\/[a-z-]+$/);
        expect(Object.keys(mounted), `${name}: ${entry.name}`).toContain(
          entry.value.split("/").at(-1),
        );
      }
      expect(Object.keys(mounted).length, `${name}: only its own files`).toBe(files.length);
    }
    // The release's Secret holds the values; the migration Job's copy only the Postgres URL.
    const secret = all.find((o) => o.kind === "Secret" && o.metadata.name === "r1-crm-connection");
    expect(Object.keys(secret.data).sort()).toEqual([
      "admin-token",
      "admin-token-next",
      "database-read-url",
      "database-url",
      "redis-url",
      "smtp-url",
    ]);
    const migrate = all.find((o) => o.kind === "Secret" && o.metadata.name === "r1-crm-migrate");
    expect(Object.keys(migrate.data)).toEqual(["database-url"]);
    expect(secret.stringData).toBeUndefined();
    // The gateway may not reach Postgres; every other component may.
    for (const component of ["gateway", "auth", "content", "ingest"]) {
      const policy = all.find((o) =>
        o.kind === "NetworkPolicy" && o.metadata.name === `r1-${component}`
      );
      const ports = policy.spec.egress.flatMap((rule: Obj) =>
        (rule.ports ?? []).map((p: Obj) => p.port)
      );
      expect(ports.includes(5432), component).toBe(component !== "gateway");
      expect(ports, component).toContain(6379);
    }
  });

  it("render the same objects twice, with the defaults and with every ci values file", async () => {
    for (const values of [undefined, ...CI_VALUES]) {
      const args = [
        "template",
        "r1",
        "helm/crm",
        ...(values ? ["-f", `helm/crm/ci/${values}`] : []),
      ];
      const [first, second] = [await helm(args), await helm(args)];
      expect(first.code, first.stderr).toBe(0);
      expect(second.stdout, values ?? "defaults").toBe(first.stdout);
    }
    // With no cluster to keep a generated admin token in, none is made up:
    // the Secret leaves the key out (GitOps users set a value or an existing Secret).
    const defaults = await render();
    const secret = defaults.find((o) => o.metadata?.name === "r1-crm-connection");
    expect(Object.keys(secret.data).sort()).toEqual(["database-url", "redis-url"]);
    const given = (await render("--set", "global.adminToken.value=t0ken"))
      .find((o) => o.metadata?.name === "r1-crm-connection");
    expect(atob(given.data["admin-token"])).toBe("t0ken");
  });

  it("roll the pods whose secret settings or block list changed, and only those", async () => {
    const checksums = async (...args: string[]) => {
      const found = containers(await render(...args));
      return Object.fromEntries(
        ["gateway", "auth", "content", "ingest"].map((c) => [
          c,
          JSON.stringify(
            Object.entries(found[c].template.metadata.annotations)
              .filter(([k]) => k.startsWith("checksum/")),
          ),
        ]),
      );
    };
    const base = ["--set", "global.adminToken.value=first"];
    const before = await checksums(...base);
    const changed = async (...args: string[]) => {
      const after = await checksums(...base, ...args);
      return Object.keys(before).filter((c) => before[c] !== after[c]).sort();
    };
    expect(await changed()).toEqual([]);
    expect(await changed("--set", "global.postgres.url=postgres://crm:new@db:5432/crm"))
      .toEqual(["auth", "content", "ingest"]);
    expect(await changed("--set", "global.adminToken.value=second"))
      .toEqual(["auth", "content", "ingest"]);
    expect(await changed("--set", "global.adminToken.next.value=second"))
      .toEqual(["auth", "content", "ingest"]);
    expect(await changed("--set", "global.redis.url=redis://other:6379"))
      .toEqual(["auth", "content", "gateway", "ingest"]);
    expect(await changed("--set", "global.smtp.url=smtp://smtp.example:587")).toEqual(["ingest"]);
    expect(await changed("--set", "global.postgres.read.url=postgres://crm@db-ro:5432/crm"))
      .toEqual(["ingest"]);
    expect(await changed("--set", "ingest.referrerBlocklist.hosts={spam.example}"))
      .toEqual(["ingest"]);
    // An existing Secret counts by its name and key (its content when the cluster can be read).
    expect(await changed("--set", "global.postgres.existingSecret=crm-postgres"))
      .toEqual(["auth", "content", "ingest"]);
  });

  it("probe liveness on the event loop, readiness on the service, and pass the new settings", async () => {
    const all = await render(
      "--set",
      "global.publicUrl=https://crm.example.com",
      "--set",
      "global.smtp.from=reports@crm.example.com",
    );
    const found = containers(all);
    for (const component of ["auth", "content", "ingest"]) {
      const { container } = found[component];
      const grpc = { port: 50051, service: "liveness" };
      expect(container.livenessProbe).toMatchObject({ grpc, terminationGracePeriodSeconds: 10 });
      // Started once the server answers, even while Postgres is still away.
      expect(container.startupProbe.grpc).toEqual(grpc);
      expect(container.readinessProbe.grpc.service).toBe(
        `crm.${component}.v1.${component[0].toUpperCase() + component.slice(1)}Service`,
      );
      expect(container.livenessProbe.tcpSocket).toBeUndefined();
    }
    const gateway = found.gateway.container;
    expect(gateway.livenessProbe.httpGet.path).toBe("/livez");
    const env = (name: string) =>
      Object.fromEntries(found[name].container.env.map((e: Obj) => [e.name, e.value]));
    expect(env("gateway").TRACE_TRUST_PARENT).toBe("0");
    expect(env("gateway").PUBLIC_URL).toBe("https://crm.example.com");
    expect(env("ingest").PUBLIC_URL).toBe("https://crm.example.com");
    expect(env("auth").PUBLIC_URL).toBe("https://crm.example.com");
    expect(env("content").PUBLIC_URL).toBeUndefined();
    expect(env("gateway").REPORT_TIMEOUT_MS).toBe("10000");
    expect(env("ingest").MAIL_FROM).toBe("reports@crm.example.com");
    expect(env("ingest")).toMatchObject({
      DATABASE_POOL_SIZE: "10",
      REPORT_POOL_SIZE: "4",
      REPORT_TIMEOUT_MS: "10000",
    });
    for (const name of ["auth", "content"]) {
      expect(env(name).DATABASE_POOL_SIZE).toBe("10");
      expect(env(name).REPORT_TIMEOUT_MS).toBeUndefined();
      expect(env(name).MAIL_FROM).toBeUndefined();
    }
    const trusting = containers(await render("--set", "gateway.traceTrustParent=true"));
    expect(trusting.gateway.container.env).toContainEqual({
      name: "TRACE_TRUST_PARENT",
      value: "1",
    });
    // Defaults: an account per service without a token, a soft spread over nodes.
    for (const component of ["gateway", "auth", "content", "ingest"]) {
      const { pod } = found[component];
      expect(pod.serviceAccountName).toBe(`r1-${component}`);
      // The deprecated alias too: a rollback to a chart naming none removes both.
      expect(pod.serviceAccount).toBe(`r1-${component}`);
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution)
        .toHaveLength(1);
    }
    expect(all.filter((o) => o.kind === "ServiceAccount").map((o) => o.metadata.name).sort())
      .toEqual(["r1-auth", "r1-content", "r1-gateway", "r1-ingest"]);
    const none = containers(
      await render(
        "--set",
        "auth.serviceAccount.create=false",
        "--set",
        "auth.podAntiAffinityPreset=",
        "--set",
        "content.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=disk",
        "--set",
        "content.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists",
        "--set",
        "global.adminJobs.serviceAccountName=crm-admin",
      ),
    );
    expect(none.auth.pod.serviceAccountName).toBeUndefined();
    expect(none.auth.pod.serviceAccount).toBeUndefined();
    expect(none.auth.pod.affinity).toBeUndefined();
    expect(Object.keys(none.content.pod.affinity)).toEqual(["nodeAffinity"]);
    expect(none.migrate.pod.serviceAccountName).toBe("crm-admin");
    expect(none.migrate.pod.automountServiceAccountToken).toBe(false);
  });

  it("refuse wrong values with the schema's reason", async () => {
    const refusals: [string, RegExp][] = [
      ["gateway.replicaCount=-1", /replicaCount.*minimum/],
      ["global.otel.protocol=grpc", /protocol.*must be one of/],
      ["gateway.replicas=2", /additional properties 'replicas' not allowed/],
      ["global.postgres.url=mysql://db/crm", /postgres\/url.*does not match pattern/],
      ["global.postgres.read.url=mysql://db-ro/crm", /read\/url.*does not match pattern/],
      ["global.smtp.url=http://smtp.example", /smtp\/url.*does not match pattern/],
      ["global.image.digest=latest", /digest.*does not match pattern/],
      ["gateway.podAntiAffinityPreset=medium", /podAntiAffinityPreset.*must be one of/],
      ["ingest.referrerBlocklist.hosts={spam example}", /hosts\/0.*does not match pattern/],
      ["auth.extraVolumes[0].configMap.name=ca", /extraVolumes\/0.*missing property 'name'/],
      ["global.postgres.poolSize=0", /poolSize.*minimum/],
      ["global.reports.timeoutMs=5", /timeoutMs.*minimum/],
      ["content.referrerBlocklist.hosts={a}", /additional properties 'referrerBlocklist'/],
    ];
    for (const [setting, reason] of refusals) {
      const rendered = await helm(["template", "r1", "helm/crm", "--set", setting]);
      expect(rendered.code, setting).not.toBe(0);
      expect(rendered.stderr).toMatch(reason);
    }
  });
});
