// The shortcut for walks where nothing changed answers what the full reconciliation answers, and only then.
import FolderImport
import XCTest

final class UnchangedReconciliationTests: XCTestCase {
    func file(_ path: String, inode: UInt64, hash: String, id: String, root: String = "/p") -> (WalkedFile, RememberedFile) {
        (WalkedFile(path: path, root: root, device: 1, inode: inode, size: 1000, mtimeNanos: 1, kind: .jpeg),
         RememberedFile(path: path, root: root, device: 1, inode: inode, size: 1000, mtimeNanos: 1, partialHash: hash,
                        fullHash: "F" + hash, photoID: id))
    }

    func answers(_ files: [(WalkedFile, RememberedFile)], others: [RememberedFile] = [], shown: [String: String])
        -> (FileReconciliation.Resolution?, FileReconciliation.Resolution) {
        let classification = FileReconciliation.classify(remembered: files.map(\.1), walked: files.map(\.0))
        let candidates = files.map { walked, _ -> FileReconciliation.Candidate in
            let (change, previous) = classification.changes[walked.path]!
            return .init(file: walked, change: change, previous: previous, partialHash: previous?.partialHash ?? "")
        }
        let fast = FileReconciliation.unchanged(candidates: candidates, vanished: classification.vanished, others: others,
                                                previousRepresentative: shown)
        let full = FileReconciliation.resolve(candidates: candidates, vanished: classification.vanished, others: others,
                                              previousRepresentative: shown, newID: { "file-" + $0.partialHash },
                                              takenIDs: [], fullHash: { _ in nil })
        return (fast, full)
    }

    /// Two photos, one of them in two identical files, one more copy in a folder not walked now.
    func testSameAnswerAsTheFullReconciliation() throws {
        let files = [file("/p/a.jpg", inode: 1, hash: "A", id: "file-A"), file("/p/b.jpg", inode: 2, hash: "B", id: "file-B"),
                     file("/p/c.jpg", inode: 3, hash: "B", id: "file-B")]
        let other = file("/q/d.jpg", inode: 4, hash: "A", id: "file-A", root: "/q").1
        let (fast, full) = answers(files, others: [other], shown: ["file-A": "/p/a.jpg", "file-B": "/p/c.jpg"])
        let shortcut = try XCTUnwrap(fast)
        XCTAssertEqual(shortcut, full)
        XCTAssertEqual(shortcut.duplicateFiles, 2)
        XCTAssertEqual(shortcut.photosToWrite, [])
    }

    /// A photo no longer shown from any of its files (its row lost, or pointing elsewhere) needs the full answer.
    func testAPhotoShownFromElsewhereTakesTheFullPath() {
        let files = [file("/p/a.jpg", inode: 1, hash: "A", id: "file-A")]
        XCTAssertNil(answers(files, shown: [:]).0)
        XCTAssertNil(answers(files, shown: ["file-A": "/p/gone.jpg"]).0)
    }

    func testAnyChangeTakesTheFullPath() {
        let (walked, remembered) = file("/p/a.jpg", inode: 1, hash: "A", id: "file-A")
        var edited = walked
        edited.mtimeNanos = 2
        let classification = FileReconciliation.classify(remembered: [remembered], walked: [edited])
        let (change, previous) = classification.changes[edited.path]!
        let candidate = FileReconciliation.Candidate(file: edited, change: change, previous: previous, partialHash: "A2")
        XCTAssertNil(FileReconciliation.unchanged(candidates: [candidate], vanished: [], others: [],
                                                  previousRepresentative: ["file-A": "/p/a.jpg"]))
        let gone = FileReconciliation.classify(remembered: [remembered], walked: [])
        XCTAssertNil(FileReconciliation.unchanged(candidates: [], vanished: gone.vanished, others: [],
                                                  previousRepresentative: ["file-A": "/p/a.jpg"]))
    }
}
