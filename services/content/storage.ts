/** Content-service tables: reading a site's content and importing its manifest part. */
import type { Database, Queryable } from "../lib/db/mod.ts";
import type { BlockType, BlogOrder } from "../lib/formats.ts";
import type { FieldDef, Json, LanguageMap, Manifest } from "../lib/manifest/types.ts";
import { sortPosts } from "./blog.ts";
import type { Block, Page, Post, Section, SiteContent } from "./model.ts";
import { cleanHtml } from "./sanitize.ts";
import { exportWebhooks, syncWebhooks } from "../lib/webhooks/outbox.ts";
import { CONTENT_SCHEMA } from "./migrations/mod.ts";
import { enqueueImportMessages } from "./webhooks.ts";
import type { ContentChanges } from "./changes.ts";
import type { Cursor, RecordedChange } from "./feed.ts";

interface SiteRow {
  languages: string[];
  fallbacks: Record<string, string> | null;
  blog_page_size: number;
  blog_order: BlogOrder;
  blog_scheduling: boolean;
}

const time = (d: Date | string | null) => (d === null ? null : new Date(d).getTime());
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export class ContentStore {
  constructor(private readonly db: Database) {}

  /**
   * The whole content of a site, or undefined when no manifest was imported
   * for it; read through `q` (a transaction's view) when given.
   */
  async load(siteId: string, q: Queryable = this.db): Promise<SiteContent | undefined> {
    const [site] = await q.query<SiteRow & Record<string, unknown>>(
      `select languages, fallbacks, blog_page_size, blog_order, blog_scheduling
         from content.sites where site_id = $1`,
      [siteId],
    );
    if (!site) return undefined;
    // Read before the content: every change the snapshot counts is in the content read after.
    const [feed] = await q.query<{ seq: string | number | null }>(
      "select max(seq) as seq from content.changes where site_id = $1",
      [siteId],
    );
    const pageRows = await q.query<{ marker: string; href: string; updated_at: Date }>(
      "select marker, href, updated_at from content.pages where site_id = $1 order by position",
      [siteId],
    );
    const sectionRows = await q.query<
      { marker: string; page_marker: string | null; show: boolean; updated_at: Date }
    >(
      `select marker, page_marker, show, updated_at
         from content.sections where site_id = $1 order by position`,
      [siteId],
    );
    const blockRows = await q.query<{
      id: number;
      section_marker: string;
      marker: string;
      name: string;
      type: BlockType;
      multilang: boolean;
      fields: FieldDef[] | null;
      content: Json;
      updated_at: Date;
    }>(
      `select id, section_marker, marker, name, type, multilang, fields, content, updated_at
         from content.blocks where site_id = $1 order by position, id`,
      [siteId],
    );
    const postRows = await q.query<{
      slug: string;
      status: "draft" | "published";
      published_at: Date | null;
      created_at: Date | null;
      author: string | null;
      title: LanguageMap;
      image: string | LanguageMap | null;
      body: LanguageMap;
      position: number;
      updated_at: Date;
    }>(
      `select slug, status, published_at, created_at, author, title, image, body, position,
              updated_at
         from content.posts where site_id = $1 order by position`,
      [siteId],
    );

    const sections = new Map<string, Section>();
    for (const s of sectionRows) {
      sections.set(s.marker, {
        marker: s.marker,
        pageMarker: s.page_marker,
        show: s.show,
        blocks: [],
        savedAt: new Date(s.updated_at).toISOString(),
      });
    }
    const blocksByMarker = new Map<string, Block[]>();
    for (const b of blockRows) {
      const block: Block = {
        id: b.id,
        sectionMarker: b.section_marker,
        marker: b.marker,
        name: b.name,
        type: b.type,
        multilang: b.multilang,
        fields: b.fields,
        content: b.content,
        updatedAt: new Date(b.updated_at).toISOString(),
      };
      sections.get(b.section_marker)?.blocks.push(block);
      const same = blocksByMarker.get(b.marker) ?? [];
      same.push(block);
      blocksByMarker.set(b.marker, same);
    }
    for (const list of blocksByMarker.values()) list.sort((a, b) => a.id - b.id);
    const pages = new Map<string, Page>();
    for (const p of pageRows) {
      pages.set(p.marker, {
        marker: p.marker,
        href: p.href,
        sections: [],
        savedAt: new Date(p.updated_at).toISOString(),
      });
    }
    for (const s of sections.values()) if (s.pageMarker) pages.get(s.pageMarker)?.sections.push(s);
    const posts: Post[] = postRows.map((p) => ({
      slug: p.slug,
      status: p.status,
      publishedAt: time(p.published_at),
      createdAt: time(p.created_at),
      author: p.author,
      title: p.title,
      image: p.image,
      body: p.body,
      savedAt: new Date(p.updated_at).getTime(),
      position: p.position,
    }));
    return {
      siteId,
      languages: site.languages,
      fallbacks: site.fallbacks ?? {},
      blog: {
        pageSize: site.blog_page_size,
        order: site.blog_order,
        scheduling: site.blog_scheduling,
      },
      pages,
      sections,
      blocksByMarker,
      posts: sortPosts(posts, site.blog_order),
      changeSeq: Number(feed?.seq ?? 0),
    };
  }

  /**
   * The site's recorded changes after `since` (feed.ts's isNewSince) up to
   * the snapshot's last one, oldest first.
   */
  async changesSince(
    siteId: string,
    window: { since: Cursor; upTo: number; now: number },
  ): Promise<RecordedChange[]> {
    const rows = await this.db.query<{ seq: string | number; at: Date; names: ContentChanges }>(
      `select seq, at, names from content.changes
        where site_id = $1 and seq <= $2 and at <= $3::timestamptz
          and (seq > $4 or at > $5::timestamptz)
        order by seq`,
      [
        siteId,
        window.upTo,
        new Date(window.now).toISOString(),
        window.since.seq,
        new Date(window.since.at).toISOString(),
      ],
    );
    return rows.map((r) => ({ seq: Number(r.seq), at: new Date(r.at).getTime(), names: r.names }));
  }

  async siteExists(siteId: string): Promise<boolean> {
    const rows = await this.db.query("select 1 from content.sites where site_id = $1", [siteId]);
    return rows.length > 0;
  }

  /** The members of the site manifest this service owns, as export-site prints them. */
  async exportPart(siteId: string): Promise<Record<string, unknown> | undefined> {
    const site = await this.load(siteId);
    if (!site) return undefined;
    const webhooks = await exportWebhooks(this.db, CONTENT_SCHEMA, siteId);
    const section = (s: Section) => ({
      marker: s.marker,
      show: s.show,
      blocks: s.blocks.map((b) => ({
        marker: b.marker,
        name: b.name,
        type: b.type,
        multilang: b.multilang,
        ...(b.fields ? { fields: b.fields } : {}),
        content: b.content,
      })),
    });
    return {
      site: {
        languages: site.languages,
        // Optional in a manifest: absent when the site has none.
        ...(Object.keys(site.fallbacks).length ? { fallbacks: site.fallbacks } : {}),
      },
      blog: site.blog,
      pages: [...site.pages.values()].map((p) => ({
        marker: p.marker,
        href: p.href,
        sections: p.sections.map(section),
      })),
      sections: [...site.sections.values()].filter((s) => s.pageMarker === null).map(section),
      posts: [...site.posts].sort((a, b) => a.position - b.position).map((p) => ({
        slug: p.slug,
        status: p.status,
        publishedAt: iso(p.publishedAt),
        createdAt: iso(p.createdAt),
        author: p.author,
        title: p.title,
        image: p.image,
        body: p.body,
      })),
      // Optional in a manifest: absent when the site has none, as a manifest without any reads.
      ...(webhooks.length > 0 ? { webhooks } : {}),
    };
  }

  /**
   * Makes the stored content of the site equal to the manifest: rows are
   * inserted, updated only when they differ (so an unchanged block keeps its
   * id and updatedAt), and removed when absent. Returns counts of changes;
   * the site's updated_at moves when anything changed. The same transaction
   * stores the site's webhooks and enqueues the messages the import causes
   * (webhooks.ts), judged at `now`.
   */
  async importSite(manifest: Manifest, now: number): Promise<Record<string, number>> {
    const siteId = manifest.site.id;
    return await this.db.transaction(async (tx) => {
      const changes: Record<string, number> = {};
      const count = (what: string) => (changes[what] = (changes[what] ?? 0) + 1);

      const settings = [
        JSON.stringify(manifest.site.languages),
        manifest.blog.pageSize,
        manifest.blog.order,
        manifest.blog.scheduling,
        JSON.stringify(manifest.site.fallbacks),
      ] as const;
      const [current] = await tx.query<{ same: boolean }>(
        `select (languages::text = $2 and blog_page_size = $3 and blog_order = $4
                 and blog_scheduling = $5 and fallbacks::text = $6) as same
           from content.sites where site_id = $1 for update`,
        [siteId, ...settings],
      );
      if (!current) {
        await tx.query(
          `insert into content.sites
             (site_id, languages, blog_page_size, blog_order, blog_scheduling, fallbacks)
           values ($1, $2::json, $3, $4, $5, $6::json)`,
          [siteId, ...settings],
        );
        count("site");
      }
      // Only webhooks that want content messages are sent them; the feed records every change.
      const told = manifest.webhooks.some((w) => w.events.some((e) => e !== "lead.created"));
      // What the content API answered before: the site row is new, or locked and not yet changed.
      const before = current ? await this.load(siteId, tx) : undefined;
      if (current && !current.same) {
        await tx.query(
          `update content.sites set languages = $2::json, blog_page_size = $3, blog_order = $4,
                  blog_scheduling = $5, fallbacks = $6::json where site_id = $1`,
          [siteId, ...settings],
        );
        count("site");
      }

      await syncPages(tx, manifest, count);
      await syncSectionsAndBlocks(tx, manifest, count);
      await syncPosts(tx, manifest, count);
      for (
        const [what, n] of Object.entries(
          await syncWebhooks(tx, CONTENT_SCHEMA, { siteId, webhooks: manifest.webhooks, now }),
        )
      ) changes[what] = n;
      await enqueueImportMessages(tx, {
        siteId,
        before,
        after: await this.load(siteId, tx),
        now,
        told,
      });

      if (Object.keys(changes).length) {
        await tx.query(
          "update content.sites set updated_at = now() where site_id = $1",
          [siteId],
        );
      }
      return changes;
    });
  }
}

type Count = (what: string) => void;

/** Rows keyed by key, each compared through a canonical JSON text of its stored fields. */
async function syncRows(
  options: {
    existing: Map<string, string>;
    wanted: Map<string, string>;
    remove: (key: string) => Promise<void>;
    upsert: (key: string, isNew: boolean) => Promise<void>;
    label: string;
    count: Count;
  },
) {
  for (const key of options.existing.keys()) {
    if (!options.wanted.has(key)) {
      await options.remove(key);
      options.count(`${options.label}Removed`);
    }
  }
  for (const [key, fingerprint] of options.wanted) {
    const before = options.existing.get(key);
    if (before === fingerprint) continue;
    await options.upsert(key, before === undefined);
    options.count(before === undefined ? `${options.label}Added` : `${options.label}Changed`);
  }
}

async function syncPages(tx: Queryable, manifest: Manifest, count: Count) {
  const siteId = manifest.site.id;
  const rows = await tx.query<{ marker: string; href: string; position: number }>(
    "select marker, href, position from content.pages where site_id = $1",
    [siteId],
  );
  const existing = new Map(rows.map((r) => [r.marker, JSON.stringify([r.href, r.position])]));
  const pages = new Map(manifest.pages.map((p, position) => [p.marker, { ...p, position }]));
  const wanted = new Map([...pages].map(([m, p]) => [m, JSON.stringify([p.href, p.position])]));
  await syncRows({
    existing,
    wanted,
    label: "pages",
    count,
    remove: async (marker) => {
      await tx.query("delete from content.pages where site_id = $1 and marker = $2", [
        siteId,
        marker,
      ]);
    },
    upsert: async (marker) => {
      const p = pages.get(marker)!;
      await tx.query(
        `insert into content.pages (site_id, marker, href, position, updated_at)
         values ($1, $2, $3, $4, clock_timestamp())
         on conflict (site_id, marker) do update
           set href = excluded.href, position = excluded.position, updated_at = clock_timestamp()`,
        [siteId, marker, p.href, p.position],
      );
    },
  });
}

async function syncSectionsAndBlocks(tx: Queryable, manifest: Manifest, count: Count) {
  const siteId = manifest.site.id;
  const sectionList = [
    ...manifest.pages.flatMap((p) =>
      p.sections.map((s) => ({ ...s, pageMarker: p.marker as string | null }))
    ),
    ...manifest.sections.map((s) => ({ ...s, pageMarker: null as string | null })),
  ];
  const sectionRows = await tx.query<
    { marker: string; page_marker: string | null; show: boolean; position: number }
  >(
    "select marker, page_marker, show, position from content.sections where site_id = $1",
    [siteId],
  );
  const sections = new Map(sectionList.map((s, position) => [s.marker, { ...s, position }]));
  // A page whose sections changed was changed by this import, and so was a
  // section that lost a block: their updatedAt when they hold no block.
  const pageOf = new Map(sectionRows.map((r) => [r.marker, r.page_marker]));
  const touchedPages = new Set<string>();
  const touchedSections = new Set<string>();
  const touch = (...pages: (string | null | undefined)[]) => {
    for (const page of pages) if (page) touchedPages.add(page);
  };
  await syncRows({
    existing: new Map(
      sectionRows.map((r) => [r.marker, JSON.stringify([r.page_marker, r.show, r.position])]),
    ),
    wanted: new Map(
      [...sections].map(([m, s]) => [m, JSON.stringify([s.pageMarker, s.show, s.position])]),
    ),
    label: "sections",
    count,
    remove: async (marker) => {
      await tx.query("delete from content.sections where site_id = $1 and marker = $2", [
        siteId,
        marker,
      ]);
      touch(pageOf.get(marker));
    },
    upsert: async (marker) => {
      const s = sections.get(marker)!;
      await tx.query(
        `insert into content.sections (site_id, marker, page_marker, show, position, updated_at)
         values ($1, $2, $3, $4, $5, clock_timestamp())
         on conflict (site_id, marker) do update
           set page_marker = excluded.page_marker, show = excluded.show,
               position = excluded.position, updated_at = clock_timestamp()`,
        [siteId, marker, s.pageMarker, s.show, s.position],
      );
      touch(pageOf.get(marker), s.pageMarker);
    },
  });

  const blockRows = await tx.query<{
    section_marker: string;
    marker: string;
    name: string;
    type: string;
    multilang: boolean;
    fields: string | null;
    content: string | null;
    position: number;
  }>(
    `select section_marker, marker, name, type, multilang, fields::text as fields,
            content::text as content, position
       from content.blocks where site_id = $1`,
    [siteId],
  );
  // Positions run through the whole manifest, so new blocks get ids in manifest order.
  let position = 0;
  const blocks = new Map<string, {
    section: string;
    marker: string;
    name: string;
    type: string;
    multilang: boolean;
    fields: string | null;
    content: string | null;
    position: number;
  }>();
  for (const s of sectionList) {
    for (const b of s.blocks) {
      blocks.set(`${s.marker}\u0000${b.marker}`, {
        section: s.marker,
        marker: b.marker,
        name: b.name,
        type: b.type,
        multilang: b.multilang,
        fields: b.fields ? JSON.stringify(b.fields) : null,
        content: b.content === null ? null : JSON.stringify(b.content),
        position: position++,
      });
    }
  }
  // Content compares by value (json text may differ in spacing from what was written).
  const norm = (text: string | null) => (text === null ? null : JSON.stringify(JSON.parse(text)));
  const valueOf = (
    b: {
      name: string;
      type: string;
      multilang: boolean;
      fields: string | null;
      content: string | null;
    },
  ) => JSON.stringify([b.name, b.type, b.multilang, norm(b.fields), norm(b.content)]);
  const existing = new Map(blockRows.map((r) => [`${r.section_marker}\u0000${r.marker}`, r]));
  for (const [key, row] of existing) {
    if (!blocks.has(key)) {
      await tx.query(
        "delete from content.blocks where site_id = $1 and section_marker = $2 and marker = $3",
        [siteId, row.section_marker, row.marker],
      );
      count("blocksRemoved");
      if (sections.has(row.section_marker)) touchedSections.add(row.section_marker);
      touch(sections.get(row.section_marker)?.pageMarker);
    }
  }
  for (const [key, b] of blocks) {
    const before = existing.get(key);
    if (!before) {
      await tx.query(
        `insert into content.blocks
           (site_id, section_marker, marker, name, type, multilang, fields, content, position, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7::json, $8::json, $9, clock_timestamp())`,
        [siteId, b.section, b.marker, b.name, b.type, b.multilang, b.fields, b.content, b.position],
      );
      count("blocksAdded");
    } else if (valueOf(before) !== valueOf(b)) {
      await tx.query(
        `update content.blocks set name = $4, type = $5, multilang = $6, fields = $7::json,
                content = $8::json, position = $9, updated_at = clock_timestamp()
          where site_id = $1 and section_marker = $2 and marker = $3`,
        [siteId, b.section, b.marker, b.name, b.type, b.multilang, b.fields, b.content, b.position],
      );
      count("blocksChanged");
    } else if (before.position !== b.position) {
      // Moved only: not an edit, so updatedAt stays.
      await tx.query(
        "update content.blocks set position = $4 where site_id = $1 and section_marker = $2 and marker = $3",
        [siteId, b.section, b.marker, b.position],
      );
      count("blocksMoved");
    }
  }
  if (touchedSections.size) {
    await tx.query(
      `update content.sections set updated_at = clock_timestamp()
        where site_id = $1 and marker in (select json_array_elements_text($2::json))`,
      [siteId, JSON.stringify([...touchedSections])],
    );
  }
  if (touchedPages.size) {
    await tx.query(
      `update content.pages set updated_at = clock_timestamp()
        where site_id = $1 and marker in (select json_array_elements_text($2::json))`,
      [siteId, JSON.stringify([...touchedPages])],
    );
  }
}

async function syncPosts(tx: Queryable, manifest: Manifest, count: Count) {
  const siteId = manifest.site.id;
  const rows = await tx.query<{ slug: string; fingerprint: string }>(
    `select slug, json_build_array(status, published_at, created_at, author, title, image, body, position)::text
              as fingerprint
       from content.posts where site_id = $1`,
    [siteId],
  );
  const posts = new Map(manifest.posts.map((p, position) => {
    const body: Record<string, string> = {};
    for (const [lang, html] of Object.entries(p.body)) body[lang] = cleanHtml(html);
    return [p.slug, { ...p, body, position }];
  }));
  const fingerprint = (values: unknown[]) => JSON.stringify(values);
  // Compare through JSON of normalised values on both sides.
  const existing = new Map(rows.map((r) => {
    const [status, publishedAt, createdAt, author, title, image, body, position] = JSON.parse(
      r.fingerprint,
    );
    return [
      r.slug,
      fingerprint([
        status,
        publishedAt === null ? null : new Date(publishedAt).toISOString(),
        createdAt === null ? null : new Date(createdAt).toISOString(),
        author,
        title,
        image,
        body,
        position,
      ]),
    ];
  }));
  const wanted = new Map([...posts].map(([slug, p]) => [
    slug,
    fingerprint([
      p.status,
      p.publishedAt,
      p.createdAt,
      p.author,
      p.title,
      p.image,
      p.body,
      p.position,
    ]),
  ]));
  await syncRows({
    existing,
    wanted,
    label: "posts",
    count,
    remove: async (slug) => {
      await tx.query("delete from content.posts where site_id = $1 and slug = $2", [siteId, slug]);
    },
    upsert: async (slug) => {
      const p = posts.get(slug)!;
      await tx.query(
        `insert into content.posts
           (site_id, slug, status, published_at, created_at, author, title, image, body, position)
         values ($1, $2, $3, $4::timestamptz, $5::timestamptz, $6, $7::json, $8::json, $9::json, $10)
         on conflict (site_id, slug) do update set
           status = excluded.status, published_at = excluded.published_at,
           created_at = excluded.created_at, author = excluded.author, title = excluded.title,
           image = excluded.image, body = excluded.body, position = excluded.position,
           updated_at = now()`,
        [
          siteId,
          slug,
          p.status,
          p.publishedAt,
          p.createdAt,
          p.author,
          JSON.stringify(p.title),
          p.image === null ? null : JSON.stringify(p.image),
          JSON.stringify(p.body),
          p.position,
        ],
      );
    },
  });
}
