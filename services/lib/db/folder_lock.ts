/**
 * Keeps two processes from opening one embedded store, which would corrupt
 * it: an exclusive advisory lock (flock) on `.lock` in the folder, held while
 * the store is open. The kernel releases it when the holder exits, however it
 * exits, so a lock file left by a killed process blocks nobody, and a reused
 * process id can never pass for the holder. The file holds the holder's pid,
 * only to name it in the refusal.
 */
export async function acquireFolderLock(dir: string): Promise<() => void> {
  const path = `${dir}/.lock`;
  const file = await Deno.open(path, { read: true, write: true, create: true });
  try {
    if (!(await file.tryLock(true))) {
      const owner = (await Deno.readTextFile(path).catch(() => "")).trim();
      throw new Error(
        `the storage folder ${dir} is in use by ${
          /^\d+$/.test(owner) ? `process ${owner}` : "another process"
        }; stop it or set CRM_DATA_DIR`,
      );
    }
    await file.truncate(0);
    const pid = new TextEncoder().encode(String(Deno.pid));
    for (let written = 0; written < pid.length;) {
      written += await file.write(pid.subarray(written));
    }
  } catch (error) {
    file.close();
    throw error;
  }
  return () => {
    // Closing the file releases the lock; the file stays for the next holder.
    file.close();
  };
}
