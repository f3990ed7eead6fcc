/** What every forge client answers, whatever the forge. */

export type ForgeRepository = {
  /** The forge's id of the repository (GitLab's numeric project id is what `forgeBProjectId` holds). */
  id: string;
  name: string;
  /** `owner/name` (GitLab: the full path with namespace). */
  fullName: string;
  /** The account, organization, group path or workspace the repository belongs to. */
  owner: string;
  defaultBranch: string | null;
  private: boolean;
  /** The https clone address the forge gives. */
  cloneUrl: string | null;
};

export type ForgeBranch = {
  name: string;
  /** The commit at the branch's head, when the forge says. */
  commit: string | null;
};

/** A repository to clone: its https address and a short-lived login for it (basic auth). */
export interface CloneLogin {
  url: string;
  username: string;
  password: string;
}

export interface ForgeClient {
  /** Every repository the connection reaches (all pages), within its group/workspace/organization when one is set. */
  repositories(): Promise<ForgeRepository[]>;
  /** Every branch of a repository (all pages). */
  branches(owner: string, repo: string): Promise<ForgeBranch[]>;
  /** Checks the credentials by listing repositories; answers how many. */
  testConnection(): Promise<{ repositories: number }>;
  /** The clone address of a repository and a login minted (or read) for this clone only. */
  cloneLogin(owner: string, repo: string): Promise<CloneLogin>;
  /** A token for the forge's REST API (comments, statuses): minted (GitHub App), refreshed when expiring (GitLab OAuth), or the stored one. */
  apiToken(): Promise<string>;
}
