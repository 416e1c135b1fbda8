/**
 * Files written from a source of truth (helm/schema.ts, helm/monitoring.ts):
 * `write` puts a file's text in place, or with `check` only notes the files
 * whose text differs, so the same run both generates and checks.
 */
export interface GeneratedFiles {
  write(url: URL, text: string): Promise<void>;
  /** The files that are not current (with `check`). */
  stale: string[];
}

export function generatedFiles(check: boolean): GeneratedFiles {
  const stale: string[] = [];
  return {
    stale,
    async write(url, text) {
      const current = await Deno.readTextFile(url).catch(() => "");
      if (current === text) return;
      if (check) stale.push(url.pathname);
      else await Deno.writeTextFile(url, text);
    },
  };
}
