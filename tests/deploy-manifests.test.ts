import { describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import YAML from "yaml";
import { ROOT, runProcess } from "./helpers.ts";
import { renderChart, TemplateError } from "./support/helm-render.ts";
import { manifestProblems } from "./support/k8s-validate.ts";
import { NGINX, NGINX_CONF, NGINX_MISSING, renderNginxConfig } from "./support/nginx.ts";

// A loaded 2-core machine can be slow without anything being wrong: a generous bound, not 5 s.
setDefaultTimeout(60_000);

/**
 * The deployment files, checked where no container runtime, cluster or helm binary is at hand: the
 * Helm chart rendered (tests/support/helm-render.ts) and validated against Kubernetes' schemas for
 * the default values and for every option on, docker-compose.yml's structure, nginx -t on the
 * shipped nginx configuration, and the Dockerfile's stages and build context.
 */
const CHART = join(ROOT, "deploy", "helm", "mcpproxy");
const ALL_OPTIONS = YAML.parse(readFileSync(join(CHART, "ci", "all-options-values.yaml"), "utf8")) as Record<
  string,
  unknown
>;

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are read by path in the assertions
type Manifest = Record<string, any>;
const byKind = (manifests: Manifest[], kind: string) => manifests.find((manifest) => manifest.kind === kind);

describe("the Helm chart (deploy/helm/mcpproxy)", () => {
  for (const [label, values] of [
    ["default values", {}],
    ["every option on (ci/all-options-values.yaml)", ALL_OPTIONS],
  ] as const) {
    test(`renders to manifests valid against the Kubernetes schemas: ${label}`, async () => {
      const { manifests } = renderChart(CHART, values);
      const problems = (await Promise.all(manifests.map(manifestProblems))).flat();
      expect(problems).toEqual([]);
      const kinds = manifests.map((manifest) => manifest.kind).sort();
      expect(kinds).toEqual(
        values === ALL_OPTIONS
          ? [
              "ConfigMap",
              "Deployment",
              "HorizontalPodAutoscaler",
              "Ingress",
              "PodDisruptionBudget",
              "Secret",
              "Service",
            ]
          : ["ConfigMap", "Deployment", "PodDisruptionBudget", "Service"],
      );
    });
  }

  test("runs the proxy as a non-root user on a read-only root, the data dir writable, probes on /health", () => {
    const { manifests } = renderChart(CHART);
    const pod = byKind(manifests, "Deployment")!.spec.template.spec;
    const [container] = pod.containers;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    const mounts = Object.fromEntries(
      container.volumeMounts.map((mount: Manifest) => [mount.mountPath, mount]),
    );
    expect(mounts["/data"].readOnly).toBeUndefined();
    expect(
      pod.volumes.find((volume: Manifest) => volume.name === mounts["/data"].name).emptyDir,
    ).toBeDefined();
    expect(mounts["/data/http-token"]).toMatchObject({ subPath: "http-token", readOnly: true });
    expect(container.readinessProbe.exec.command).toEqual(["mcpproxy-health", "ready"]);
    expect(container.livenessProbe.exec.command).toEqual(["mcpproxy-health", "live"]);
    expect(container.args).toEqual(["serve", "--transport", "http", "--host", "0.0.0.0", "--port", "8080"]);
    // The store's URL and key come from the Secret, never from the values in clear.
    const env = Object.fromEntries(container.env.map((variable: Manifest) => [variable.name, variable]));
    for (const [name, key] of [
      ["MCPPROXY_STORE", "store"],
      ["MCPPROXY_STORE_KEY", "store-key"],
    ] as const)
      expect(env[name]).toEqual({ name, valueFrom: { secretKeyRef: { name: "mcpproxy", key } } });
  });

  test("ties the Service, PodDisruptionBudget, HPA, Secret, ConfigMap and Ingress to the Deployment", () => {
    const { manifests } = renderChart(CHART, ALL_OPTIONS);
    const deployment = byKind(manifests, "Deployment")!;
    const podLabels = deployment.spec.template.metadata.labels;
    const name = deployment.metadata.name;
    expect(deployment.spec.replicas).toBeUndefined(); // the HPA owns the count
    expect(byKind(manifests, "Service")!.spec.selector).toEqual(podLabels);
    expect(deployment.spec.selector.matchLabels).toEqual(podLabels);
    expect(byKind(manifests, "PodDisruptionBudget")!.spec.selector.matchLabels).toEqual(podLabels);
    expect(byKind(manifests, "HorizontalPodAutoscaler")!.spec.scaleTargetRef).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name,
    });
    const secret = byKind(manifests, "Secret")!;
    expect(Object.keys(secret.stringData).sort()).toEqual(["http-token", "store", "store-key"]);
    const refs = deployment.spec.template.spec.containers[0].env
      .map((variable: Manifest) => variable.valueFrom?.secretKeyRef?.name)
      .filter(Boolean);
    expect(new Set(refs)).toEqual(new Set([secret.metadata.name]));
    const config = byKind(manifests, "ConfigMap")!;
    expect(JSON.parse(config.data["config.json"])).toEqual(ALL_OPTIONS.config as object);
    const ingress = byKind(manifests, "Ingress")!;
    expect(ingress.metadata.annotations["nginx.ingress.kubernetes.io/upstream-hash-by"]).toBe("$remote_addr");
    expect(ingress.metadata.annotations["nginx.ingress.kubernetes.io/proxy-buffering"]).toBe("off");
    expect(ingress.spec.rules[0].http.paths[0].backend.service.name).toBe(
      byKind(manifests, "Service")!.metadata.name,
    );
  });

  test("refuses to make the Secret without its values", () => {
    expect(() => renderChart(CHART, { secret: { create: true } })).toThrow(
      "secret.store (postgres://…) is required",
    );
  });

  test("the renderer refuses what it does not know, so the chart cannot outgrow the check", () => {
    const chart = mkdtempSync(join(tmpdir(), "mcpproxy-chart-"));
    try {
      cpSync(CHART, chart, { recursive: true });
      const probe = (template: string) => {
        writeFileSync(join(chart, "templates", "extra.yaml"), template);
        return () => renderChart(chart);
      };
      expect(probe("{{ range .Values.extraEnv }}{{ . }}{{ end }}")).toThrow(TemplateError);
      expect(probe("{{ .Values.image.repository | upper }}")).toThrow('"upper"');
      expect(probe("{{ $name := .Release.Name }}")).toThrow(TemplateError);
      expect(probe("{{ tpl .Values.image.tag . }}")).toThrow('"tpl"');
      expect(probe("{{ if .Values.x }}open")).toThrow("not closed");
      expect(probe("a: {{ .Values.resources }}")).toThrow("toYaml");
    } finally {
      rmSync(chart, { recursive: true, force: true });
    }
  });
});

describe("docker-compose.yml", () => {
  const compose = YAML.parse(readFileSync(join(ROOT, "docker-compose.yml"), "utf8"), {
    merge: true,
  }) as Manifest;
  const replicas = Object.keys(compose.services).filter((name) => /^mcpproxy-\d+$/.test(name));

  test("runs PostgreSQL with a healthcheck, three replicas that wait for it, and nginx with the shipped config", () => {
    const postgres = compose.services.postgres;
    expect(postgres.image).toMatch(/^postgres:\d+/);
    expect(postgres.healthcheck.test.join(" ")).toContain("pg_isready");
    expect(postgres.volumes.some((volume: string) => volume.endsWith(":/var/lib/postgresql/data"))).toBe(
      true,
    );
    expect(replicas).toEqual(["mcpproxy-1", "mcpproxy-2", "mcpproxy-3"]);
    const dataVolumes = new Set<string>();
    for (const name of replicas) {
      const replica = compose.services[name];
      expect(replica.build).toBe(".");
      expect(replica.depends_on.postgres).toEqual({ condition: "service_healthy" });
      expect(replica.environment.MCPPROXY_STORE).toContain("@postgres:5432/");
      expect(replica.volumes).toContain("./deploy/compose/mcp_config.json:/etc/mcpproxy/config.json:ro");
      dataVolumes.add(replica.volumes.find((volume: string) => volume.endsWith(":/data")));
      expect(replica.secrets).toEqual([{ source: "http-token", target: "/data/http-token" }]);
    }
    // Each replica has a data dir of its own.
    expect(dataVolumes.size).toBe(3);
    const nginx = compose.services.nginx;
    expect(nginx.volumes).toContain("./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro");
    expect(Object.keys(nginx.depends_on).sort()).toEqual(replicas);
    // The upstream names nginx.conf uses are the replicas' service names.
    const upstreams = new Set(readFileSync(NGINX_CONF, "utf8").match(/mcpproxy-\d+(?=:8080)/g));
    expect([...upstreams].sort()).toEqual(replicas);
  });

  test("writes no secret: passwords and keys come from the environment or a git-ignored file", () => {
    for (const [name, service] of Object.entries(compose.services as Record<string, Manifest>)) {
      for (const [key, value] of Object.entries((service.environment ?? {}) as Record<string, string>)) {
        if (!/PASSWORD|KEY|TOKEN|STORE|SECRET/.test(key)) continue;
        // postgres://user:${POSTGRES_PASSWORD…}@host: the secret part is a variable.
        const literal = value.replace(/\$\{[A-Z_]+(:\?[^}]*)?\}/g, "");
        expect({ service: name, key, literal }).toEqual({
          service: name,
          key,
          literal: key === "MCPPROXY_STORE" ? "postgres://mcpproxy:@postgres:5432/mcpproxy" : "",
        });
      }
    }
    expect(compose.secrets["http-token"].file).toBe("./deploy/compose/http-token");
    expect(readFileSync(join(ROOT, ".gitignore"), "utf8")).toContain("deploy/compose/http-token");
  });
});

test.skipIf(!NGINX)("nginx -t accepts the shipped nginx.conf (upstream names mapped to 127.0.0.1)", () => {
  const dir = mkdtempSync(join(tmpdir(), "mcpproxy-nginx-t-"));
  try {
    const conf = renderNginxConfig(readFileSync(NGINX_CONF, "utf8"), {
      upstreams: ["127.0.0.1:18081", "127.0.0.1:18082", "127.0.0.1:18083"],
      listen: "127.0.0.1:18080",
      dir,
    });
    writeFileSync(join(dir, "nginx.conf"), conf);
    const check = Bun.spawnSync(
      [NGINX!, "-t", "-p", dir, "-e", join(dir, "error.log"), "-c", join(dir, "nginx.conf")],
      {
        stderr: "pipe",
      },
    );
    expect({ code: check.exitCode, stderr: check.stderr.toString() }).toMatchObject({ code: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
if (!NGINX) process.stderr.write(`skipping nginx -t of deploy/nginx/nginx.conf: ${NGINX_MISSING}\n`);

describe("Dockerfile", () => {
  const lines = readFileSync(join(ROOT, "Dockerfile"), "utf8")
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((line) => line.trim() && !line.startsWith("#"));
  const stages: string[][] = [];
  for (const line of lines) {
    if (line.startsWith("FROM ")) stages.push([]);
    stages.at(-1)?.push(line);
  }
  const final = stages.at(-1)!;

  test("builds in one stage and runs only the binary, as a non-root user, in the next", () => {
    expect(stages).toHaveLength(2);
    expect(stages[0]![0]).toMatch(/^FROM \S+ AS build$/);
    expect(stages[0]).toContain("RUN npm ci --no-audit --no-fund");
    expect(stages[0]!.some((line) => line.startsWith("RUN npm run build"))).toBe(true);
    expect(final[0]).toMatch(/^FROM (debian:bookworm-slim|gcr\.io\/distroless\/)/);
    const copies = final.filter((line) => line.startsWith("COPY "));
    expect(copies).toEqual([
      "COPY --from=build /src/dist/mcpproxy /usr/local/bin/mcpproxy",
      "COPY deploy/health-probe.sh /usr/local/bin/mcpproxy-health",
    ]);
    const user = final.find((line) => line.startsWith("USER "))?.split(/\s+/)[1] ?? "";
    expect(user.split(":")[0]).not.toMatch(/^(0|root)?$/);
    expect(final).toContain('ENTRYPOINT ["mcpproxy"]');
    expect(final).toContain("EXPOSE 8080");
    expect(final.find((line) => line.startsWith("HEALTHCHECK"))).toContain('CMD ["mcpproxy-health", "live"]');
  });

  test("the build context .dockerignore lets through is enough to compile the binary, which needs only glibc", async () => {
    const patterns = readFileSync(join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .filter((line) => line.trim() && !line.startsWith("#"));
    const matcher = (pattern: string) => {
      const glob = pattern.replace(/^!/, "").replace(/\/$/, "");
      const source = glob
        .replace(/[.+^${}()|[\]\\]/g, "\\$&")
        .replace(/\*\*/g, "\0")
        .replace(/\*/g, "[^/]*");
      return new RegExp(`^${source.replace(/\0/g, ".*")}(/.*)?$`);
    };
    const rules = patterns.map((pattern) => ({ keep: pattern.startsWith("!"), regex: matcher(pattern) }));
    const inContext = (path: string) =>
      rules.reduce((kept, rule) => (rule.regex.test(path) ? rule.keep : kept), true);
    const context = mkdtempSync(join(tmpdir(), "mcpproxy-docker-context-"));
    try {
      const walk = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
          if (entry.name === "node_modules" || entry.name === ".git" || entry.name === "dist") return [];
          const path = join(dir, entry.name);
          return entry.isDirectory() ? walk(path) : [relative(ROOT, path)];
        });
      for (const file of walk(ROOT).filter(inContext)) {
        mkdirSync(join(context, file, ".."), { recursive: true });
        cpSync(join(ROOT, file), join(context, file));
      }
      // Every COPY of the build context names something the context holds.
      for (const line of lines.filter((line) => line.startsWith("COPY ") && !line.includes("--from="))) {
        for (const source of line.split(/\s+/).slice(1, -1))
          expect({ source, inContext: existsSync(join(context, source)) }).toEqual({
            source,
            inContext: true,
          });
      }
      // The build stage's `npm run build`, on what the context holds (node_modules stands in for npm ci).
      symlinkSync(join(ROOT, "node_modules"), join(context, "node_modules"));
      const build = await runProcess(
        [process.execPath, "scripts/compile.ts"],
        { PATH: process.env.PATH ?? "" },
        context,
      );
      expect({ code: build.code, stderr: build.stderr.slice(-2000) }).toMatchObject({ code: 0 });
      const binary = join(context, "dist", "mcpproxy");
      expect((await runProcess([binary, "--version"], { PATH: "/usr/bin:/bin" })).code).toBe(0);
      // Debian slim's libc6 carries each library the binary links.
      const ldd = await runProcess(["ldd", binary], { PATH: "/usr/bin:/bin" });
      const libraries = [...ldd.stdout.matchAll(/^\s*(\S+)/gm)].map((match) => match[1]!.replace(/.*\//, ""));
      const glibc =
        /^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux-[\w-]+\.so\.2)$/;
      expect(libraries.filter((library) => !glibc.test(library))).toEqual([]);
    } finally {
      rmSync(context, { recursive: true, force: true });
    }
  }, 120_000);
});
