// The reconciliation of a folder walk with what the last import remembered: every way files move and change.
import FolderImport
import XCTest

final class FileReconciliationTests: XCTestCase {
    let root = "/p"

    func walked(_ path: String, inode: UInt64, size: Int64 = 1000, mtime: Int64 = 1) -> WalkedFile {
        WalkedFile(path: path, root: root, device: 1, inode: inode, size: size, mtimeNanos: mtime, kind: .jpeg)
    }

    func remembered(_ path: String, inode: UInt64, size: Int64 = 1000, mtime: Int64 = 1, hash: String, id: String,
                    full: String? = nil, root: String? = nil) -> RememberedFile {
        RememberedFile(path: path, root: root ?? self.root, device: 1, inode: inode, size: size, mtimeNanos: mtime,
                       partialHash: hash, fullHash: full, photoID: id)
    }

    /// Runs both steps; `hashes` are the partial hashes of files read, `full` the full hashes asked for.
    func reconcile(_ before: [RememberedFile], _ now: [WalkedFile], hashes: [String: String],
                   full: [String: String] = [:], others: [RememberedFile] = [], taken: Set<String> = [],
                   representatives: [String: String]? = nil) -> (FileReconciliation.Classification, FileReconciliation.Resolution, [String]) {
        let classification = FileReconciliation.classify(remembered: before, walked: now)
        var asked: [String] = []
        let candidates = now.map { file -> FileReconciliation.Candidate in
            let (change, previous) = classification.changes[file.path]!
            return .init(file: file, change: change, previous: previous,
                         partialHash: hashes[file.path] ?? previous?.partialHash ?? "")
        }
        var reps: [String: String] = [:]
        for file in before where reps[file.photoID] == nil { reps[file.photoID] = file.path }
        let resolution = FileReconciliation.resolve(
            candidates: candidates, vanished: classification.vanished, others: others,
            previousRepresentative: representatives ?? reps, newID: { "file-" + $0.partialHash }, takenIDs: taken,
            fullHash: { asked.append($0); return full[$0] })
        return (classification, resolution, asked)
    }

    func testAnUnchangedFolderReadsNothingAndWritesNothing() {
        let before = [remembered("/p/a.jpg", inode: 1, hash: "A", id: "file-A"), remembered("/p/b.jpg", inode: 2, hash: "B", id: "file-B")]
        let (classification, resolution, asked) = reconcile(before, [walked("/p/a.jpg", inode: 1), walked("/p/b.jpg", inode: 2)], hashes: [:])
        XCTAssertEqual(classification.pathsToRead, [])
        XCTAssertEqual(resolution.photosToWrite, [])
        XCTAssertEqual(resolution.removedPhotoIDs, [])
        XCTAssertEqual(asked, [])
        XCTAssertEqual(resolution.files, before)
    }

    func testFirstImportGivesIdsFromContent() {
        let (classification, resolution, _) = reconcile([], [walked("/p/a.jpg", inode: 1), walked("/p/b.jpg", inode: 2, size: 5)],
                                                         hashes: ["/p/a.jpg": "A", "/p/b.jpg": "B"])
        XCTAssertEqual(classification.pathsToRead, ["/p/a.jpg", "/p/b.jpg"])
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-A", "file-B"])
        XCTAssertEqual(resolution.photosToWrite, ["file-A", "file-B"])
        XCTAssertEqual(resolution.changes["/p/a.jpg"], .new)
    }

    func testRenameKeepsThePhoto() {
        let before = [remembered("/p/a.jpg", inode: 7, hash: "A", id: "file-A")]
        let (classification, resolution, _) = reconcile(before, [walked("/p/sub/renamed.jpg", inode: 7)], hashes: ["/p/sub/renamed.jpg": "A"])
        XCTAssertEqual(classification.changes["/p/sub/renamed.jpg"]?.0, .renamed)
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-A"])
        XCTAssertEqual(resolution.representative["file-A"], "/p/sub/renamed.jpg")
        XCTAssertEqual(resolution.photosToWrite, ["file-A"], "its URL (and maybe its title) changed")
        XCTAssertEqual(resolution.removedPhotoIDs, [])
    }

    /// A photo archived and the next card's IMG_0001.JPG in its place: the archived file keeps its photo, the
    /// new one is new (by path first, the new file took the old photo's identity, and the old became "-2").
    func testAReusedPathDoesNotTakeTheMovedPhotosIdentity() {
        let before = [remembered("/p/DCIM/IMG_0001.JPG", inode: 7, hash: "A", id: "file-A")]
        let now = [walked("/p/Archive/IMG_0001.JPG", inode: 7), walked("/p/DCIM/IMG_0001.JPG", inode: 8, size: 2000, mtime: 5)]
        let (classification, resolution, _) = reconcile(before, now, hashes: ["/p/Archive/IMG_0001.JPG": "A", "/p/DCIM/IMG_0001.JPG": "B"])
        XCTAssertEqual(classification.changes["/p/Archive/IMG_0001.JPG"]?.0, .renamed)
        XCTAssertEqual(classification.changes["/p/DCIM/IMG_0001.JPG"]?.0, .new)
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-A", "file-B"])
        XCTAssertEqual(resolution.representative["file-A"], "/p/Archive/IMG_0001.JPG")
        XCTAssertEqual(resolution.removedPhotoIDs, [])
    }

    /// An inode alone is no identity: b.jpg deleted and a.jpg saved again by an editor, which got b's freed
    /// inode (ext4 reuses them at once), is a.jpg edited; b's photo leaves.
    func testAReusedInodeIsNotARename() {
        let before = [remembered("/p/a.jpg", inode: 7, hash: "A", id: "file-A"), remembered("/p/b.jpg", inode: 8, hash: "B", id: "file-B")]
        let (classification, resolution, _) = reconcile(before, [walked("/p/a.jpg", inode: 8, size: 2000, mtime: 9)],
                                                        hashes: ["/p/a.jpg": "A2"])
        XCTAssertEqual(classification.changes["/p/a.jpg"]?.0, .edited)
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-A"])
        XCTAssertEqual(resolution.removedPhotoIDs, ["file-B"])
    }

    /// Two names swapped, and a folder renumbered (each file renamed to the next number): every photo follows
    /// its file.
    func testSwappedAndRenumberedNamesKeepTheirPhotos() {
        let before = [remembered("/p/a.jpg", inode: 7, hash: "A", id: "file-A"), remembered("/p/b.jpg", inode: 8, hash: "B", id: "file-B")]
        var (classification, resolution, _) = reconcile(before, [walked("/p/a.jpg", inode: 8), walked("/p/b.jpg", inode: 7)],
                                                        hashes: ["/p/a.jpg": "B", "/p/b.jpg": "A"])
        XCTAssertEqual(classification.changes["/p/a.jpg"]?.0, .renamed)
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-B", "file-A"])
        XCTAssertEqual(resolution.removedPhotoIDs, [])

        let numbered = (1...4).map { remembered("/p/DSC_000\($0).JPG", inode: UInt64(10 + $0), hash: "H\($0)", id: "file-H\($0)") }
        let shifted = (1...4).map { walked("/p/DSC_000\($0 + 1).JPG", inode: UInt64(10 + $0)) }
        var hashes: [String: String] = [:]
        for number in 1...4 { hashes["/p/DSC_000\(number + 1).JPG"] = "H\(number)" }
        (classification, resolution, _) = reconcile(numbered, shifted, hashes: hashes)
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-H1", "file-H2", "file-H3", "file-H4"])
        XCTAssertEqual(Set(classification.changes.values.map(\.0)), [.renamed])
        XCTAssertEqual(resolution.removedPhotoIDs, [])
    }

    func testMoveToAnotherInodeIsFoundByContent() {
        let before = [remembered("/p/a.jpg", inode: 7, hash: "A", id: "file-A")]
        let (_, resolution, _) = reconcile(before, [walked("/p/other/a.jpg", inode: 99)], hashes: ["/p/other/a.jpg": "A"])
        XCTAssertEqual(resolution.changes["/p/other/a.jpg"], .moved)
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-A"])
        XCTAssertEqual(resolution.removedPhotoIDs, [])
    }

    func testAnEditIsTheSamePhotoWithNewBytes() {
        let before = [remembered("/p/a.jpg", inode: 7, hash: "A", id: "file-A")]
        let (classification, resolution, _) = reconcile(before, [walked("/p/a.jpg", inode: 7, size: 2000, mtime: 5)],
                                                        hashes: ["/p/a.jpg": "A2"])
        XCTAssertEqual(classification.changes["/p/a.jpg"]?.0, .edited)
        XCTAssertEqual(resolution.files.first?.photoID, "file-A")
        XCTAssertEqual(resolution.files.first?.partialHash, "A2")
        XCTAssertEqual(resolution.photosToWrite, ["file-A"])
        // An editor that writes a new file and renames it over the old one: same path, another inode.
        let (replaced, _, _) = reconcile(before, [walked("/p/a.jpg", inode: 8)], hashes: ["/p/a.jpg": "A"])
        XCTAssertEqual(replaced.changes["/p/a.jpg"]?.0, .edited)
    }

    func testADeletedFileRemovesItsPhoto() {
        let before = [remembered("/p/a.jpg", inode: 1, hash: "A", id: "file-A"), remembered("/p/b.jpg", inode: 2, hash: "B", id: "file-B")]
        let (classification, resolution, _) = reconcile(before, [walked("/p/a.jpg", inode: 1)], hashes: [:])
        XCTAssertEqual(classification.vanished.map(\.path), ["/p/b.jpg"])
        XCTAssertEqual(resolution.removedPhotoIDs, ["file-B"])
    }

    func testSmallDuplicatesAreOnePhotoWithoutAFullHash() {
        let (_, resolution, asked) = reconcile([], [walked("/p/a.jpg", inode: 1, size: 50), walked("/p/copy.jpg", inode: 2, size: 50)],
                                               hashes: ["/p/a.jpg": "S", "/p/copy.jpg": "S"])
        XCTAssertEqual(asked, [], "the partial hash covered every byte")
        XCTAssertEqual(resolution.duplicateFiles, 1)
        XCTAssertEqual(Set(resolution.files.map(\.photoID)).count, 1)
        XCTAssertEqual(resolution.representative.values.first, "/p/a.jpg")
    }

    func testLargeFilesAgreeingOnTheirBeginningAreComparedWhole() {
        let big: Int64 = 10_000_000
        let files = [walked("/p/a.jpg", inode: 1, size: big), walked("/p/b.jpg", inode: 2, size: big),
                     walked("/p/c.jpg", inode: 3, size: big), walked("/p/d.jpg", inode: 4, size: 77)]
        let (_, resolution, asked) = reconcile([], files, hashes: ["/p/a.jpg": "H", "/p/b.jpg": "H", "/p/c.jpg": "H", "/p/d.jpg": "H"],
                                               full: ["/p/a.jpg": "F1", "/p/b.jpg": "F1", "/p/c.jpg": "F2"])
        XCTAssertEqual(asked.sorted(), ["/p/a.jpg", "/p/b.jpg", "/p/c.jpg"], "not d: another size")
        XCTAssertEqual(resolution.duplicateFiles, 1)
        let ids = Dictionary(uniqueKeysWithValues: resolution.files.map { ($0.path, $0.photoID) })
        XCTAssertEqual(ids["/p/a.jpg"], ids["/p/b.jpg"])
        XCTAssertNotEqual(ids["/p/a.jpg"], ids["/p/c.jpg"], "same beginning, other bytes: two photos with unique ids")
        XCTAssertEqual(Set(ids.values).count, 3)
        XCTAssertEqual(resolution.files.first { $0.path == "/p/a.jpg" }?.fullHash, "F1", "remembered for the next import")
    }

    func testACopyJoinsTheExistingPhotoAndTheOriginalsDeletionKeepsIt() {
        let before = [remembered("/p/a.jpg", inode: 1, size: 50, hash: "S", id: "file-S")]
        let (_, copied, _) = reconcile(before, [walked("/p/a.jpg", inode: 1, size: 50), walked("/p/b.jpg", inode: 2, size: 50)],
                                       hashes: ["/p/b.jpg": "S"])
        XCTAssertEqual(copied.files.map(\.photoID), ["file-S", "file-S"])
        XCTAssertEqual(copied.photosToWrite, [], "the photo is still shown from a.jpg")
        let (_, deleted, _) = reconcile(copied.files, [walked("/p/b.jpg", inode: 2, size: 50)], hashes: [:],
                                        representatives: ["file-S": "/p/a.jpg"])
        XCTAssertEqual(deleted.removedPhotoIDs, [])
        XCTAssertEqual(deleted.representative["file-S"], "/p/b.jpg")
        XCTAssertEqual(deleted.photosToWrite, ["file-S"])
    }

    func testOtherFoldersKeepTheirPhotosAndIdsStayUnique() {
        let other = remembered("/q/x.jpg", inode: 9, hash: "X", id: "file-X", root: "/q")
        let (_, resolution, _) = reconcile([], [walked("/p/y.jpg", inode: 1, size: 999)], hashes: ["/p/y.jpg": "X"],
                                           others: [other], taken: ["file-X"])
        XCTAssertEqual(resolution.files.map(\.photoID), ["file-X-2"], "another size: another photo, another id")
        XCTAssertEqual(resolution.removedPhotoIDs, [])
        let (_, same, _) = reconcile([], [walked("/p/y.jpg", inode: 1, size: 1000)], hashes: ["/p/y.jpg": "X"],
                                     full: ["/p/y.jpg": "F", "/q/x.jpg": "F"], others: [other], taken: ["file-X"],
                                     representatives: ["file-X": "/q/x.jpg"])
        XCTAssertEqual(same.files.map(\.photoID), ["file-X"], "the same bytes in another folder: its photo")
        XCTAssertEqual(same.photosToWrite, [], "still shown from the other folder")
    }
}

extension FileReconciliationTests {
    func testAnEditedDuplicateLeavesTheSetAsAPhotoOfItsOwn() {
        let before = [remembered("/p/a.jpg", inode: 1, size: 50, hash: "S", id: "file-S"),
                      remembered("/p/b.jpg", inode: 2, size: 50, hash: "S", id: "file-S")]
        let (_, resolution, _) = reconcile(before, [walked("/p/a.jpg", inode: 1, size: 50), walked("/p/b.jpg", inode: 2, size: 60, mtime: 9)],
                                           hashes: ["/p/b.jpg": "T"], representatives: ["file-S": "/p/a.jpg"])
        let ids = Dictionary(uniqueKeysWithValues: resolution.files.map { ($0.path, $0.photoID) })
        XCTAssertEqual(ids["/p/a.jpg"], "file-S")
        XCTAssertEqual(ids["/p/b.jpg"], "file-T")
        XCTAssertEqual(resolution.photosToWrite, ["file-T"])
        XCTAssertEqual(resolution.duplicateFiles, 0)
    }
}
