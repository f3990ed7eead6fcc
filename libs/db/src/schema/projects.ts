import type { Insertable, Selectable, Updateable } from 'kysely';
import type { CreatedAt } from './columns.js';

export interface ProjectsTable {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  /** Encrypted dotenv text. */
  env: string;
  createdAt: CreatedAt;
}

export interface EnvironmentsTable {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  /** Encrypted dotenv text. */
  env: string;
  createdAt: CreatedAt;
}

export type Project = Selectable<ProjectsTable>;
export type Environment = Selectable<EnvironmentsTable>;
export type NewProject = Insertable<ProjectsTable>;
export type ProjectUpdate = Updateable<ProjectsTable>;
