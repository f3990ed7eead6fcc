// Projects and their environments, with the services inside them.
// What routers and the composition root use; services import each other's files directly.
export { ProjectService } from './projects.js';
