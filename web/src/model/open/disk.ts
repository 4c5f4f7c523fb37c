// A model folder from disk: files picked with <input type="file" multiple>, a folder picked (webkitdirectory, where
// the browser offers it) or dropped (its entries walked). Files are kept by name, without their folder: lab.loadModel
// reads them slice by slice (a File is a Blob), so no weight file sits in JavaScript memory whole.
import { isModelFile } from './files';

/** A folder's model files by name, and the folder's name when the browser told it. */
export interface DiskFiles { files: Map<string, File>; folder: string | undefined }

function add(out: DiskFiles, file: File, path: string): void {
  if (!isModelFile(file.name)) return;
  out.files.set(file.name, file);
  const parts = path.split('/').filter(Boolean);
  if (parts.length > 1 && out.folder === undefined) out.folder = parts[parts.length - 2];
}

/** The files of an <input type="file"> (a folder pick gives each one's path in webkitRelativePath). */
export function fromFileList(list: FileList): DiskFiles {
  const out: DiskFiles = { files: new Map(), folder: undefined };
  for (const f of Array.from(list)) add(out, f, f.webkitRelativePath || f.name);
  return out;
}

const entryFile = (e: FileSystemFileEntry): Promise<File> => new Promise((resolve, reject) => e.file(resolve, reject));
function readAll(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => {
    const all: FileSystemEntry[] = [];
    // readEntries gives a batch at a time (about 100 in Chromium) until an empty one.
    const next = () => reader.readEntries((batch) => {
      if (batch.length === 0) resolve(all);
      else { all.push(...batch); next(); }
    }, reject);
    next();
  });
}

/** The files of a drop: files, or a folder (its top level; a model folder keeps its files there). */
export async function fromDrop(data: DataTransfer): Promise<DiskFiles> {
  const out: DiskFiles = { files: new Map(), folder: undefined };
  const entries = Array.from(data.items ?? []).map((i) => (i.kind === 'file' ? i.webkitGetAsEntry?.() : null));
  if (entries.length === 0 || entries.some((e) => !e)) {
    for (const f of Array.from(data.files)) add(out, f, f.name);
    return out;
  }
  for (const entry of entries as FileSystemEntry[]) {
    if (entry.isDirectory) {
      out.folder ??= entry.name;
      for (const child of await readAll((entry as FileSystemDirectoryEntry).createReader())) {
        if (child.isFile) add(out, await entryFile(child as FileSystemFileEntry), child.name);
      }
    } else if (entry.isFile) {
      add(out, await entryFile(entry as FileSystemFileEntry), entry.name);
    }
  }
  return out;
}
