/**
 * The docs describe the code, so they must not point at what is not there: every relative link of
 * the README and docs/ leads to a file (and to a heading, when it names one), and every setting the
 * settings table names is read by the code.
 */
import { describe, expect, it } from "vitest";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;

function markdownFiles(): string[] {
  const docs = [...Deno.readDirSync(join(ROOT, "docs"))]
    .filter((entry) => entry.isFile && entry.name.endsWith(".md"))
    .map((entry) => join(ROOT, "docs", entry.name));
  return [join(ROOT, "README.md"), ...docs].sort();
}

/** Text outside fenced code blocks, where a link or a heading means what it says. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "");
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = headingAnchor(heading);
    const count = seen.get(base) ?? 0;
    anchors.add(count === 0 ? base : `${base}-${count}`);
    seen.set(base, count + 1);
  }
  return anchors;
}

interface Link {
  file: string;
  target: string;
}

function relativeLinks(file: string): Link[] {
  const text = prose(Deno.readTextFileSync(file));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, target]) => ({ file, target }))
    .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Names of the settings table's first column in docs/operations.md (`NAME`, `A`, `B`). */
function documentedSettings(): string[] {
  const text = Deno.readTextFileSync(join(ROOT, "docs/operations.md"));
  const section = text.split(/^## Settings$/m)[1]?.split(/^## /m)[0] ?? "";
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    if (!line.startsWith("| `")) continue;
    const firstCell = line.split("|")[1];
    for (const [, name] of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(name);
  }
  return [...names];
}

function codeText(): string {
  const parts: string[] = [];
  const walk = (folder: string) => {
    for (const entry of Deno.readDirSync(folder)) {
      const path = join(folder, entry.name);
      if (entry.isDirectory && entry.name !== "gen") walk(path);
      else if (entry.isFile && entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts")) {
        parts.push(Deno.readTextFileSync(path));
      }
    }
  };
  walk(join(ROOT, "services"));
  return parts.join("\n");
}

describe("docs", () => {
  it("links only to files and headings that exist", () => {
    const broken: string[] = [];
    const links = markdownFiles().flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(10);
    for (const { file, target } of links) {
      const [path, anchor] = target.split("#");
      const destination = path === "" ? file : join(dirname(file), decodeURIComponent(path));
      const where = `${relative(ROOT, file)} → ${target}`;
      let isFile = false;
      try {
        isFile = Deno.statSync(destination).isFile;
      } catch {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor && isFile && destination.endsWith(".md")) {
        if (!anchorsOf(Deno.readTextFileSync(destination)).has(anchor)) {
          broken.push(`${where}: no such heading`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("names only settings the code reads", () => {
    const settings = documentedSettings();
    expect(settings).toContain("DATABASE_URL");
    const code = codeText();
    const unknown = settings.filter((name) => !code.includes(name));
    expect(unknown).toEqual([]);
  });

  it("keeps the README a front door under 10 KB", () => {
    const size = Deno.statSync(join(ROOT, "README.md")).size;
    expect(size).toBeLessThan(10 * 1024);
  });

  it("has no code comment pointing outside the repository", () => {
    const outside = /\.\.\/shared\/|CONTRACT\.md|seeds\//;
    const offenders: string[] = [];
    const walk = (folder: string) => {
      for (const entry of Deno.readDirSync(folder)) {
        const path = join(folder, entry.name);
        if (
          entry.isDirectory &&
          !["node_modules", ".git", "gen", "dist", ".data"].includes(entry.name)
        ) {
          walk(path);
        } else if (entry.isFile && /\.(ts|js|sh|yaml|tpl|html)$/.test(entry.name)) {
          if (outside.test(Deno.readTextFileSync(path))) offenders.push(relative(ROOT, path));
        }
      }
    };
    for (const folder of ["services", "test", "widget", "deploy", "helm", ".ci"]) {
      try {
        walk(join(ROOT, folder));
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    expect(offenders.filter((path) => path !== "test/docs_test.ts")).toEqual([]);
  });

  it("show the collector configuration the system test runs, as it is", () => {
    const file = Deno.readTextFileSync(join(ROOT, "deploy/otel-collector.yaml"));
    const page = Deno.readTextFileSync(join(ROOT, "docs/observability.md"));
    const shown = [...page.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
    expect(shown).toContain(file);
  });
});
