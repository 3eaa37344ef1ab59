import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

// The declarations as a strict TypeScript app reads them: test/types.ts compiles, and each of its
// @ts-expect-error lines is an error the declarations catch. TypeScript is no dependency of the
// client: the compiler is TSC (a path), else `tsc` on the PATH, else the package's node_modules.
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const tsc = [process.env.TSC, "tsc", path.join(root, "node_modules", ".bin", "tsc")]
  .find((candidate) => candidate && (candidate === "tsc" ? spawnSync("tsc", ["--version"]).status === 0 : existsSync(candidate)));
const NO_TSC = tsc ? false : "no TypeScript compiler here: 'npm install -g typescript' (or set TSC to a tsc) to check "
  + "src/*.d.ts against test/types.ts";

test("the declarations type a strict app: test/types.ts compiles and its expected errors are errors", { skip: NO_TSC }, () => {
  const ran = spawnSync(tsc, ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution",
    "nodenext", "--lib", "es2022,dom", path.join("test", "types.ts")], { cwd: root, encoding: "utf8" });
  assert.equal(ran.error, undefined, "ran " + tsc);
  assert.equal(ran.status, 0, "tsc on test/types.ts:\n" + ran.stdout + ran.stderr);
});
