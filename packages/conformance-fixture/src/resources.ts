import { defineResource, defineResourceTemplate } from '@taskgate/worker';
import { RED_PIXEL_PNG } from './media.js';

// The resources of the conformance `resources-*` scenarios.

export const staticText = defineResource({
  uri: 'test://static-text',
  name: 'static-text',
  title: 'Static text',
  description: 'A fixed text resource.',
  mimeType: 'text/plain',
  read: () => 'This is the content of the static text resource.',
});

export const staticBinary = defineResource({
  uri: 'test://static-binary',
  name: 'static-binary',
  title: 'Static binary',
  description: 'A fixed binary resource: a 1x1 red PNG.',
  mimeType: 'image/png',
  read: () => Buffer.from(RED_PIXEL_PNG, 'base64'),
});

export const watchedResource = defineResource({
  uri: 'test://watched-resource',
  name: 'watched-resource',
  title: 'Watched resource',
  description: 'A resource clients may subscribe to.',
  mimeType: 'text/plain',
  read: () => 'Watched resource content',
});

export const templateData = defineResourceTemplate({
  uriTemplate: 'test://template/{id}/data',
  name: 'template-data',
  title: 'Data by id',
  description: 'JSON data for any id.',
  mimeType: 'application/json',
  read: ({ id }) => JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
  complete: {
    id: (value) => ['1', '2', '3', '42', '123'].filter((id) => id.startsWith(value)),
  },
});

/** Every fixture resource and resource template. */
export const resources = [staticText, staticBinary, watchedResource, templateData];
