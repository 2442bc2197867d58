// The migration that lets folder imports remember the files they could not read as images.
import GRDB

extension Schema {
    static let refusedFilesMigration = "folders: files refused as images"

    /// `folder_refused_file`: a file a folder import read and refused for what it holds (empty, corrupt,
    /// truncated, no image its bytes say), with its stat then and the version of the reader that refused it. An import finding it with the same device,
    /// inode, size and mtime skips it unread: refused again, it was read again at every import (a warning each
    /// time) and kept every re-import of its folder off the unchanged shortcut (~2.4 s of CPU per 100,000
    /// files). A file that could not be opened is not remembered here: that passes (`chmod`) without the mtime
    /// moving; nor a photo's file an edit made corrupt, which is warned of at every import (the mount cannot open
    /// it).
    static func registerRefusedFilesMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration(refusedFilesMigration, foreignKeyChecks: .immediate) { db in
            try db.execute(sql: """
                CREATE TABLE folder_refused_file (
                    path TEXT PRIMARY KEY,
                    root TEXT NOT NULL,
                    device INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    mtime_ns INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    reader INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX folder_refused_file_by_root ON folder_refused_file(root);
                PRAGMA user_version = \(userVersion(of: refusedFilesMigration));
                """)
        }
    }
}
