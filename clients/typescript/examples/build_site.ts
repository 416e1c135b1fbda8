/**
 * A static site build with the content API, full then incremental:
 *
 *   deno run -A clients/typescript/examples/build_site.ts BASE_URL SITE_KEY OUT_DIR
 *
 * The first run lists every page (GET /content/v1/pages), writes each page's
 * answer to OUT_DIR/pages/MARKER.json and every visible post to
 * OUT_DIR/posts/SLUG.json, and keeps the changes feed's cursor in
 * OUT_DIR/cursor. A later run asks only what changed since that cursor
 * (GET /content/v1/changes?since=...), rebuilds those pages and posts,
 * deletes the ones whose answer is now 404, and keeps the new cursor. It
 * prints one JSON line: what it wrote and deleted.
 *
 * With PREVIEW_KEY set in the environment it builds a preview instead: drafts
 * and scheduled posts are there too, each post with its status.
 */
import { createCrmClient, CrmApiError } from "../src/index.ts";

const [baseUrl, siteKey, outDir] = Deno.args;
if (!baseUrl || !siteKey || !outDir) {
  console.error("usage: build_site.ts BASE_URL SITE_KEY OUT_DIR");
  Deno.exit(2);
}
const crm = createCrmClient({
  baseUrl,
  siteKey,
  previewKey: Deno.env.get("PREVIEW_KEY") || undefined,
});
const cursorFile = `${outDir}/cursor`;
await Deno.mkdir(`${outDir}/pages`, { recursive: true });
await Deno.mkdir(`${outDir}/posts`, { recursive: true });

const written: string[] = [];
const deleted: string[] = [];

/** Writes one answer, or deletes its file when the answer is now 404. */
async function save(file: string, read: () => Promise<unknown>): Promise<void> {
  try {
    await Deno.writeTextFile(file, JSON.stringify(await read(), null, 2));
    written.push(file.slice(outDir.length + 1));
  } catch (error) {
    if (!(error instanceof CrmApiError && error.status === 404)) throw error;
    await Deno.remove(file).catch(() => {});
    deleted.push(file.slice(outDir.length + 1));
  }
}

const page = (marker: string) =>
  save(`${outDir}/pages/${marker}.json`, async () => (await crm.page(marker)).data);
const post = (slug: string) =>
  save(`${outDir}/posts/${slug}.json`, async () => (await crm.post(slug)).data);

const since = await Deno.readTextFile(cursorFile).catch(() => undefined);
const feed = (await crm.changes(since ? { since: since.trim() } : {})).data;
if (feed.full) {
  for (const entry of (await crm.listPages()).data.pages) await page(entry.marker);
  const blog = (await crm.blog({ limit: 50 })).data;
  for (const summary of blog.posts) await post(summary.slug);
} else {
  // A changed section or block changes the pages that hold it: the section index says which.
  const sections = (await crm.listSections()).data.sections;
  const pageOf = new Map(sections.map((s) => [s.marker, s.page]));
  const pages = new Set(feed.pages);
  for (const name of [...feed.sections, ...feed.blocks.map((b) => b.split("/")[0])]) {
    const owner = pageOf.get(name);
    if (owner) pages.add(owner);
  }
  for (const marker of pages) await page(marker);
  for (const slug of feed.posts) await post(slug);
}
await Deno.writeTextFile(cursorFile, feed.cursor);
console.log(JSON.stringify({ full: feed.full, written, deleted }));
