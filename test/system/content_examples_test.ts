/**
 * docs/content-api.md's "Building a site" example, run as a user runs it:
 * clients/typescript/examples/build_site.ts against `deno task start`, a full
 * build, then incremental builds after imports (a changed block rebuilds its
 * page, a removed post is deleted), and a preview build with the drafts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedProcess, startTask } from "../helpers/process.ts";
import { readFixture } from "../helpers/system.ts";
import { freePort } from "../helpers/ports.ts";
import { runAdmin } from "../helpers/admin.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
const PREVIEW_KEY = "pv_0123456789abcdef0123456789abcdef";

// deno-lint-ignore no-explicit-any
type Json = any;

describe("the site-building example against deno task start", () => {
  let started: StartedProcess;
  let dir: string;
  let manifest: Json;
  let env: Record<string, string>;

  async function build(out: string, extraEnv: Record<string, string> = {}) {
    const { code, stdout, stderr } = await new Deno.Command("deno", {
      args: ["run", "-A", "clients/typescript/examples/build_site.ts", started.url, SITE_KEY, out],
      cwd: ROOT,
      env: extraEnv,
    }).output();
    const text = new TextDecoder().decode(stdout);
    expect(code, new TextDecoder().decode(stderr)).toBe(0);
    return JSON.parse(text.trim().split("\n").at(-1)!);
  }
  const importSite = async (site: Json) => {
    const file = `${dir}/manifest-${crypto.randomUUID()}.json`;
    await Deno.writeTextFile(file, JSON.stringify(site));
    const result = await runAdmin(["import", file], env);
    expect(result.code, result.stderr).toBe(0);
  };

  beforeAll(async () => {
    dir = await Deno.makeTempDir({ prefix: "crm-build-" });
    manifest = {
      ...(await readFixture("contract-example.json") as Json),
      previewKeys: [PREVIEW_KEY],
    };
    manifest.posts.push({
      slug: "next-draft",
      status: "draft",
      title: { en: "Soon" },
      body: { en: "<p>Soon</p>" },
    });
    const seed = `${dir}/seed.json`;
    await Deno.writeTextFile(seed, JSON.stringify(manifest));
    env = {
      AUTH_URL: `http://127.0.0.1:${freePort()}`,
      CONTENT_URL: `http://127.0.0.1:${freePort()}`,
      INGEST_URL: `http://127.0.0.1:${freePort()}`,
    };
    started = await startTask(["--seed", seed], {
      DATABASE_URL: "",
      REDIS_URL: "",
      CRM_DATA_DIR: `${dir}/store`,
      ...env,
    });
  }, 180_000);
  afterAll(async () => {
    await started?.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  });

  it("builds the whole site, then only what each import changed", async () => {
    const out = `${dir}/site`;
    const full = await build(out);
    expect(full.full).toBe(true);
    expect(full.written.sort()).toEqual(["pages/home.json", "posts/hello-world.json"]);
    const home = JSON.parse(await Deno.readTextFile(`${out}/pages/home.json`));
    expect(home.content.hero.content.title.content.en).toBe("Hello");

    expect(await build(out)).toEqual({ full: false, written: [], deleted: [] });

    const changed = structuredClone(manifest);
    changed.pages[0].sections[0].blocks[0].content = { en: "Hello again", de: "Hallo" };
    changed.posts = changed.posts.filter((p: Json) => p.slug !== "hello-world");
    await importSite(changed);
    const incremental = await build(out);
    expect(incremental).toEqual({
      full: false,
      written: ["pages/home.json"],
      deleted: ["posts/hello-world.json"],
    });
    const again = JSON.parse(await Deno.readTextFile(`${out}/pages/home.json`));
    expect(again.content.hero.content.title.content.en).toBe("Hello again");
  });

  it("builds a preview with the drafts", async () => {
    const preview = await build(`${dir}/preview`, { PREVIEW_KEY });
    expect(preview.written).toContain("posts/next-draft.json");
    const draft = JSON.parse(await Deno.readTextFile(`${dir}/preview/posts/next-draft.json`));
    expect(draft.status).toBe("draft");
  });
});
