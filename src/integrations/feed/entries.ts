import { createHash } from 'node:crypto';
import type { AnyFeed, AtomFeed, JsonFeed, RdfFeed, RssFeed } from 'feedsmith';
import type { TaskOutput } from '../contract.js';
import { collapse, htmlToText } from './text.js';

/** The fields every format maps to, before an id is settled. */
interface Entry {
  id?: string | undefined;
  title?: string | undefined;
  from?: string | undefined;
  date?: string | undefined;
  url?: string | undefined;
  text?: string | undefined;
}

/** One output per entry, in the feed's order. */
export function feedEntries(parsed: AnyFeed): TaskOutput[] {
  const entries = entriesOf(parsed);
  return entries.map(toOutput);
}

function entriesOf(parsed: AnyFeed): Entry[] {
  switch (parsed.format) {
    case 'rss':
      return (parsed.feed.items ?? []).map(rssEntry);
    case 'rdf':
      return (parsed.feed.items ?? []).map(rdfEntry);
    case 'atom': {
      const feedAuthor = parsed.feed.authors?.[0]?.name;
      return (parsed.feed.entries ?? []).map((entry) => atomEntry(entry, feedAuthor));
    }
    case 'json':
      return (parsed.feed.items ?? []).map(jsonEntry);
  }
}

function rssEntry(item: RssFeed.Item<string>): Entry {
  const guid = item.guid?.value;
  const author = item.authors?.[0];
  return {
    id: guid,
    title: plain(item.title),
    from: author?.name ?? author?.email ?? item.dc?.creators?.[0],
    date: item.pubDate ?? item.dc?.dates?.[0],
    url: item.link ?? (item.guid?.isPermaLink !== false && isWebUrl(guid) ? guid : undefined),
    // RSS descriptions are HTML by custom, escaped or in CDATA.
    text: html(item.content?.encoded ?? item.description),
  };
}

function rdfEntry(item: RdfFeed.Item<string>): Entry {
  return {
    id: item.rdf?.about,
    title: plain(item.title),
    from: item.dc?.creators?.[0],
    date: item.dc?.dates?.[0],
    url: item.link,
    text: html(item.content?.encoded ?? item.description),
  };
}

function atomEntry(entry: AtomFeed.Entry<string>, feedAuthor: string | undefined): Entry {
  const links = entry.links ?? [];
  const link = links.find((l) => l.rel === 'alternate') ?? links.find((l) => !l.rel);
  const body = entry.content?.value !== undefined ? entry.content : entry.summary;
  return {
    id: entry.id,
    title: atomText(entry.title),
    from: entry.authors?.[0]?.name ?? feedAuthor,
    date: entry.published ?? entry.updated,
    url: link?.href,
    text: atomText(body),
  };
}

function jsonEntry(item: JsonFeed.Item<string>): Entry {
  return {
    id: item.id,
    title: plain(item.title),
    from: item.authors?.[0]?.name,
    date: item.date_published ?? item.date_modified,
    url: item.url ?? item.external_url,
    text: item.content_text !== undefined ? plain(item.content_text) : html(item.content_html ?? item.summary),
  };
}

// Atom says how its text is written: "text" (the default) is plain, "html" and "xhtml" are markup.
function atomText(construct: { value?: string; type?: string } | undefined): string | undefined {
  if (construct?.value === undefined) return undefined;
  return construct.type === 'html' || construct.type === 'xhtml' ? html(construct.value) : plain(construct.value);
}

function toOutput(entry: Entry): TaskOutput {
  const id = nonEmpty(entry.id) ?? nonEmpty(entry.url) ?? fallbackId(entry);
  const output: TaskOutput = { externalId: id, kind: 'feed' };
  if (entry.title) output.title = entry.title;
  const from = nonEmpty(entry.from);
  if (from) output.from = collapse(from);
  const date = isoDate(entry.date);
  if (date) output.date = date;
  if (isWebUrl(entry.url)) output.url = entry.url.trim();
  if (entry.text) output.text = entry.text;
  return output;
}

// Neither id nor link: title and date are what a person would tell two such entries apart by,
// and they change less often than a text being corrected. The text only when both are missing.
function fallbackId(entry: Entry): string {
  const key = entry.title || entry.date ? `${entry.title ?? ''}\n${entry.date ?? ''}` : `\n\n${entry.text ?? ''}`;
  return `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

function isoDate(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const time = Date.parse(raw.trim());
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

function isWebUrl(value: string | undefined): value is string {
  return value !== undefined && /^https?:\/\/\S+$/i.test(value.trim());
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function plain(value: string | undefined): string | undefined {
  return value === undefined ? undefined : collapse(value) || undefined;
}

function html(value: string | undefined): string | undefined {
  return value === undefined ? undefined : htmlToText(value) || undefined;
}
