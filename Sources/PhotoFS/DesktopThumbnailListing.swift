// Which files of a listing get desktop thumbnails, under which paths, and when: before a listing's reply, when
// the catalog changes what a listing shows, and for a whole mount ahead of time (`photofs thumbnails`).
import Foundation
import PhotoCatalog
import PhotoContent
import PhotoTree

extension PhotoFilesystem {
    /// A directory's path below the mount point ("" for the root, "regions/Europe/Ann"), from the names its
    /// parents' listings give it; nil when a parent no longer lists it.
    func directoryPath(of node: Node) -> String? {
        switch node {
        case .root: return ""
        case .regions: return "regions"
        case .moments: return "moments"
        case .recent: return "recent"
        case .albums: return "albums"
        case .events: return "events"
        case .search: return "search"
        case .people: return "people"
        case .favorites: return "favorites"
        case .photo: return nil
        case .region, .year, .album, .photographer, .eventYear, .event, .searchResults, .person:
            guard let parentNode = Node(inode: parent(of: node.inode)), let parentPath = directoryPath(of: parentNode),
                  let parentListing = try? listing(of: parentNode),
                  let entry = parentListing.entries.first(where: { $0.node == node }) else { return nil }
            return parentPath + "/" + entry.name
        }
    }

    /// The files of a listing that get thumbnails, with what a valid thumbnail must say of each; `directory`
    /// is the listing's absolute path.
    /// `including` picks photos by seq before any target (and its URIs) is made.
    func desktopThumbnailTargets(in listing: DirectoryListing, directory: String, mayFetchOriginal: Bool = false,
                                 including: (Int64) -> Bool = { _ in true }) -> [DesktopThumbnailTarget] {
        listing.entries.compactMap { entry -> DesktopThumbnailTarget? in
            guard case .photo(let seq) = entry.node, including(seq) else { return nil }
            // A sized mount's file is the variant: its size once rendered, else no Thumb::Size (optional in
            // the standard; GLib then checks the mtime only).
            let size = variants.map { $0.knownSize(of: seq) } ?? entry.attributes.size
            return DesktopThumbnailTarget(path: directory + "/" + entry.name, seq: seq, mtime: entry.attributes.mtime,
                                          size: size, mimeType: DesktopThumbnailListing.mimeType(of: entry.name),
                                          mayFetchOriginal: mayFetchOriginal)
        }
    }

    /// A directory's absolute path below the writer's mount point.
    func absoluteDirectoryPath(of node: Node, writer: DesktopThumbnailWriter) -> String? {
        directoryPath(of: node).map { $0.isEmpty ? writer.options.mountpoint : writer.options.mountpoint + "/" + $0 }
    }

    /// Before a file manager's (or thumbnailer's) listing is answered: writes its photos' thumbnails, waiting
    /// a bounded time for those not written yet (`DesktopThumbnailOptions.waitPerPhoto`); the rest
    /// are written as their sources arrive. Such a listing may download an original the photo has no smaller
    /// rendition for: the file manager would read the original anyway to draw its thumbnail.
    func writeDesktopThumbnails(for listing: DirectoryListing) {
        guard let writer = desktopThumbnails,
              let directory = absoluteDirectoryPath(of: listing.attributes.node, writer: writer) else { return }
        writer.remember(directory: listing.attributes.node, path: directory)
        let targets = desktopThumbnailTargets(in: listing, directory: directory, mayFetchOriginal: true,
                                              including: { !writer.isSettled($0, mayFetchOriginal: true) })
            .filter { !writer.isKnownCurrent($0) }
        guard !targets.isEmpty else { return }
        let started = DispatchTime.now()
        let left = writer.prepare(targets, wait: writer.listingWait(forMissing: targets.count))
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        writer.waited(seconds)
        logger.debug("desktop thumbnails before listing", metadata: [
            "inode": "\(listing.attributes.inode)", "op": "opendir", "photos": "\(targets.count)", "pending": "\(left)",
            "ms": "\(seconds * 1000)",
        ])
    }

    /// After the catalog changed a listing the kernel had: names it no longer has (or that now name another
    /// photo, or all of them when the directory itself was renamed or is gone) lose their thumbnails, and
    /// the photos this mount made thumbnails for get theirs brought up to date in the background (a replaced
    /// photo's new ones, a renamed photo's under its new name), so a file manager showing the folder finds them.
    func updateDesktopThumbnails(from old: DirectoryListing, to new: DirectoryListing?) {
        let node = old.attributes.node
        guard let writer = desktopThumbnails, let oldDirectory = writer.rememberedPath(of: node) else { return }
        let newDirectory = new == nil ? nil : absoluteDirectoryPath(of: node, writer: writer)
        let kept = newDirectory == oldDirectory
            ? Set((new?.entries ?? []).map { "\($0.node.inode)/\($0.name)" }) : []
        writer.remove(paths: old.entries.filter { !$0.node.isDirectory && !kept.contains("\($0.node.inode)/\($0.name)") }
            .map { oldDirectory + "/" + $0.name })
        guard let new, let newDirectory else { return }
        writer.remember(directory: node, path: newDirectory)
        // Only photos this mount made thumbnails for: the others get theirs when their folder is listed.
        let targets = desktopThumbnailTargets(in: new, directory: newDirectory, including: writer.hasWritten)
            .filter { !writer.isKnownCurrent($0) }
        if !targets.isEmpty { writer.prepare(targets, wait: .none) }
    }

    /// Writes thumbnails for every photo of the mount, directory by directory (`photofs thumbnails`);
    /// `progress` gets (photos done, photos in all).
    public func writeAllDesktopThumbnails(progress: (Int, Int) -> Void) throws {
        guard let writer = desktopThumbnails else { return }
        var directories: [Node] = [.root]
        var listings: [DirectoryListing] = []
        while let node = directories.popLast() {
            let listing = try listing(of: node)
            listings.append(listing)
            directories += listing.entries.map(\.node).filter(\.isDirectory)
        }
        let all = listings.map { listing in
            absoluteDirectoryPath(of: listing.attributes.node, writer: writer).map {
                desktopThumbnailTargets(in: listing, directory: $0, mayFetchOriginal: true)
            } ?? []
        }
        let total = all.reduce(0) { $0 + $1.count }
        var done = 0
        progress(0, total)
        for targets in all where !targets.isEmpty {
            // 50 at a time: the writer's 8 jobs stay busy and the bar moves.
            for start in stride(from: 0, to: targets.count, by: 50) {
                let batch = Array(targets[start..<min(targets.count, start + 50)])
                writer.prepare(batch, wait: .all)
                done += batch.count
                progress(done, total)
            }
        }
        writer.flush()
    }
}

enum DesktopThumbnailListing {
    /// Thumb::Mimetype from the name photofs gave the file (its extension comes from the content type).
    static func mimeType(of name: String) -> String? {
        switch name.split(separator: ".").last?.lowercased() {
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        default: return nil
        }
    }
}
