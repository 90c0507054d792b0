// The folders both hosts refuse to checkpoint: the home directory and its
// Desktop, Documents and Downloads.

import { homedir } from "node:os";
import { join } from "node:path";

/** protectedFolder names the protected folder dir is ("home", "Desktop", ...), or undefined. */
export function protectedFolder(dir: string): string | undefined {
  const home = homedir();
  if (dir === home) return "home";
  for (const name of ["Desktop", "Documents", "Downloads"]) {
    if (dir === join(home, name)) return name;
  }
  return undefined;
}
