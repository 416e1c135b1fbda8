/**
 * The previous release (the last tag of services/cli/releases.ts) as the
 * real-node test installs it: its commit found from git history (tags are not
 * in every clone: the commit that added the tag's entry to releases.ts), its
 * tree checked out beside this one, and its image built from that tree with
 * `deno task image`'s own script, tagged `localhost/crm:TAG`. The image is
 * built once per machine: a tag whose revision label names the commit is used
 * as it is.
 */
import { RELEASES } from "../../services/cli/releases.ts";
import { podman } from "./podman.ts";
import { runCommand } from "./process.ts";

export interface PreviousRelease {
  tag: string;
  /** Its full commit hash. */
  commit: string;
  /** Its tree, checked out (`git worktree add --detach`). */
  dir: string;
  /** `localhost/crm:TAG`. */
  image: string;
  /** Removes the tree again (the image stays, for the next run). */
  remove(): Promise<void>;
}

async function git(args: string[]): Promise<string> {
  const out = await runCommand("git", args);
  if (out.code !== 0) throw new Error(`git ${args.join(" ")}: ${out.stderr}`);
  return out.stdout.trim();
}

/** The commit that added `tag`'s entry to services/cli/releases.ts. */
export async function releaseCommit(tag: string): Promise<string> {
  const found = (await git([
    "log",
    "--format=%H",
    `-Stag: "${tag}"`,
    "--",
    "services/cli/releases.ts",
  ])).split("\n").filter(Boolean);
  const commit = found.at(-1);
  if (!commit) {
    throw new Error(
      `no commit adds ${tag} to services/cli/releases.ts: is this clone shallow? (git fetch --unshallow)`,
    );
  }
  const listed = await git(["show", `${commit}:services/cli/releases.ts`]);
  if (!listed.includes(`tag: "${tag}"`)) throw new Error(`${commit} does not list ${tag}`);
  return commit;
}

/** The revision label of a local image, or undefined when there is no such image. */
async function imageRevision(image: string): Promise<string | undefined> {
  const out = await podman([
    "image",
    "inspect",
    image,
    "--format",
    '{{index .Labels "org.opencontainers.image.revision"}}',
  ]);
  return out.code === 0 ? out.stdout.trim() : undefined;
}

export async function preparePreviousRelease(): Promise<PreviousRelease> {
  const tag = RELEASES.at(-1)!.tag;
  const commit = await releaseCommit(tag);
  const dir = await Deno.makeTempDir({ prefix: `crm-${tag}-` });
  await Deno.remove(dir);
  await git(["worktree", "add", "--detach", dir, commit]);
  const remove = async () => {
    await runCommand("git", ["worktree", "remove", "--force", dir]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const image = `localhost/crm:${tag}`;
  try {
    const revision = await imageRevision(image);
    // deploy/image.sh labels the image with `git rev-parse --short` of its tree.
    if (!revision || revision === "unknown" || !commit.startsWith(revision)) {
      const built = await runCommand("bash", ["deploy/image.sh"], {
        cwd: dir,
        env: { CRM_IMAGE_TAG: image },
      });
      if (built.code !== 0) {
        throw new Error(`building ${image} from ${commit}:\n${built.stdout}${built.stderr}`);
      }
      console.log(`realnode: ${built.stdout.trim()} (${tag}, ${commit.slice(0, 9)})`);
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { tag, commit, dir, image, remove };
}
