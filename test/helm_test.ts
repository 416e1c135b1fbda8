/**
 * The charts, proven with the real tools (built by .ci/tools.sh): schemas
 * current, `helm lint --strict` on every chart, the umbrella rendered with
 * its defaults and every file under helm/crm/ci/ and validated against the
 * schemas of Kubernetes 1.37 (dumped from the API server into
 * helm/kube-openapi/), wrong values refused. Installed, tested, upgraded
 * and uninstalled on a real node: test/realnode_test.ts.
 */
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { haveTools, tool } from "./helpers/tools.ts";
import { runCommand } from "./helpers/process.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const CHARTS = ["crm", "gateway", "auth", "content", "ingest"];
const CI_VALUES = [...Deno.readDirSync(`${ROOT}helm/crm/ci`)].map((e) => e.name).sort();
const SCHEMAS = `${ROOT}helm/kube-openapi/v1.37`;

/** A command's result; env is passed on as it is. */
const run = (command: string, args: string[], env: Record<string, string> = {}) =>
  runCommand(command, args, { env });

// deno-lint-ignore no-explicit-any
type Obj = any;

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
        for (const kind of ["Deployment", "Service", "Job", "Secret", "Pod"]) {
          expect(kinds).toContain(kind);
        }
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
      for (const container of pod.containers) {
        expect(container.image).toBe("registry.example.com/crm:1.0.0");
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
    const env = Object.fromEntries(gateway.containers[0].env.map((e: Obj) => [e.name, e]));
    expect(env.DATABASE_URL.valueFrom.secretKeyRef).toEqual({ name: "crm-postgres", key: "url" });
    expect(env.ADMIN_TOKEN.valueFrom.secretKeyRef).toEqual({ name: "crm-admin", key: "token" });
    expect(env.AUTH_URL.value).toBe("http://r1-auth:50051");
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

  it("refuse wrong values with the schema's reason", async () => {
    const refusals: [string, RegExp][] = [
      ["gateway.replicaCount=-1", /replicaCount.*minimum/],
      ["global.otel.protocol=grpc", /protocol.*must be one of/],
      ["gateway.replicas=2", /additional properties 'replicas' not allowed/],
      ["global.postgres.url=mysql://db/crm", /postgres\/url.*does not match pattern/],
    ];
    for (const [setting, reason] of refusals) {
      const rendered = await helm(["template", "r1", "helm/crm", "--set", setting]);
      expect(rendered.code, setting).not.toBe(0);
      expect(rendered.stderr).toMatch(reason);
    }
  });
});
