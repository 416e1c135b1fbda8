import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireFolderLock } from "./folder_lock.ts";

const MODULE = new URL("./folder_lock.ts", import.meta.url).href;

/** Another process holding the folder's lock until it is killed. */
async function holder(dir: string): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const { acquireFolderLock } = await import(${JSON.stringify(MODULE)});
       await acquireFolderLock(${JSON.stringify(dir)});
       console.log("locked");
       setInterval(() => {}, 60_000);`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const { value } = await reader.read();
  expect(value?.trim()).toBe("locked");
  reader.releaseLock();
  return child;
}

describe("acquireFolderLock", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await Deno.makeTempDir({ prefix: "crm-lock-" });
  });
  afterEach(async () => {
    await Deno.remove(dir, { recursive: true });
  });

  it("refuses a second process while the first holds the folder, naming it", async () => {
    const first = await holder(dir);
    try {
      await expect(acquireFolderLock(dir)).rejects.toThrow(
        `the storage folder ${dir} is in use by process ${first.pid}; stop it or set CRM_DATA_DIR`,
      );
    } finally {
      first.kill("SIGKILL");
      await first.status;
    }
  });

  it("is not blocked by the lock file of a process that was killed", async () => {
    const killed = await holder(dir);
    killed.kill("SIGKILL");
    await killed.status;
    expect(Number(await Deno.readTextFile(`${dir}/.lock`))).toBe(killed.pid);
    const release = await acquireFolderLock(dir);
    expect(await Deno.readTextFile(`${dir}/.lock`)).toBe(String(Deno.pid));
    release();
  });

  it("lets the next holder in once released, also within one process", async () => {
    const release = await acquireFolderLock(dir);
    await expect(acquireFolderLock(dir)).rejects.toThrow(`in use by process ${Deno.pid}`);
    release();
    const again = await acquireFolderLock(dir);
    again();
  });
});
