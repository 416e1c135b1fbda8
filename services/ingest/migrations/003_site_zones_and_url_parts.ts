import type { Migration } from "../../lib/db/migrate.ts";

export const migration: Migration = {
  version: 3,
  name: "sites without a time zone, URL parts for the reports",
  // A site's zone is absent until its owner chooses one. The functions read
  // the parts of a stored URL the reports group by; stored URLs were
  // normalised by the WHATWG URL parser, so the scheme and host are
  // lowercase and a relative URL starts with "/".
  sql: `
      alter table ingest.sites alter column time_zone drop not null;

      -- The path of a URL, without query and fragment: "/" when empty.
      create function ingest.url_path(url text) returns text
        language sql immutable strict parallel safe
        as $$ select coalesce(nullif(substring(url from
          '^(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://[^/?#]*)?([^?#]*)'), ''), '/') $$;

      -- The host of an absolute URL (without user, password and port), or null.
      create function ingest.url_host(url text) returns text
        language sql immutable strict parallel safe
        as $$ select nullif(lower(substring(url from
          '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\\[[^]/?#]*\\]|[^/?#:]*)')), '') $$;

      -- A host as sites are compared: without a trailing dot and a leading "www.".
      create function ingest.site_host(host text) returns text
        language sql immutable strict parallel safe
        as $$ select regexp_replace(rtrim(host, '.'), '^www[.]', '') $$;

      -- The referrer's host when it is another site than the page's, else null.
      create function ingest.referrer_source(referrer text, page_url text) returns text
        language sql immutable parallel safe
        as $$ select case
          when ingest.url_host(referrer) is not null
           and ingest.site_host(ingest.url_host(referrer))
               is distinct from ingest.site_host(ingest.url_host(page_url))
          then ingest.url_host(referrer) end $$;
    `,
};
