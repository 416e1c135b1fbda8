/**
 * A lock file that keeps two processes from opening one embedded store. It
 * holds the owner's pid; a lock left by a process that no longer runs is taken
 * over.
 */
export async function acquireFolderLock(dir: string): Promise<() => void> {
  const path = `${dir}/.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const file = await Deno.open(path, { write: true, createNew: true });
      await file.write(new TextEncoder().encode(String(Deno.pid)));
      file.close();
      return () => {
        try {
          Deno.removeSync(path);
        } catch {
          // Already gone; nothing to release.
        }
      };
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      const owner = Number((await Deno.readTextFile(path).catch(() => "")).trim());
      if (owner && owner !== Deno.pid && processRuns(owner)) {
        throw new Error(
          `the storage folder ${dir} is in use by process ${owner}; stop it or set CRM_DATA_DIR`,
        );
      }
      await Deno.remove(path).catch(() => {});
    }
  }
  throw new Error(`cannot lock the storage folder ${dir}`);
}

function processRuns(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}
