package benchcast.ycsb;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB binding for embedded RocksDB.
 *
 * <p>YCSB creates one DB object per client thread; all of them share one RocksDB instance (opened by
 * the first {@link #init()}, closed by the last {@link #cleanup()}). Each YCSB table is a column
 * family. A record's fields are serialised as [int name length][name][int value length][value]...
 *
 * <p>Properties:
 * <ul>
 * <li>{@code rocksdb.dir} (required): the database directory, on the device under test.</li>
 * <li>{@code rocksdb.sync} (false): fsync the WAL on every write.</li>
 * <li>{@code rocksdb.disablewal} (false): write without a WAL.</li>
 * <li>{@code rocksdb.blockcachesize} (8388608): block cache bytes per column family.</li>
 * <li>{@code rocksdb.writebuffersize} (67108864): memtable bytes per column family.</li>
 * <li>{@code rocksdb.directio} (false): O_DIRECT reads, flushes and compactions (not on tmpfs).</li>
 * </ul>
 */
public class RocksDBClient extends DB {
  private static final Object LOCK = new Object();
  private static int references = 0;
  private static RocksDB rocksDb = null;
  private static DBOptions dbOptions = null;
  private static ColumnFamilyOptions cfOptions = null;
  private static LRUCache blockCache = null;
  private static WriteOptions writeOptions = null;
  private static String openDir = null;
  private static final Map<String, ColumnFamilyHandle> FAMILIES = new HashMap<>();

  static {
    RocksDB.loadLibrary();
  }

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String dir = p.getProperty("rocksdb.dir");
    if (dir == null || dir.isEmpty()) {
      throw new DBException("RocksDBClient: property rocksdb.dir is required");
    }
    synchronized (LOCK) {
      if (rocksDb == null) {
        open(dir, p);
      } else if (!openDir.equals(dir)) {
        throw new DBException("RocksDBClient: already open on " + openDir + ", not " + dir);
      }
      references++;
    }
  }

  private static void open(String dir, Properties p) throws DBException {
    File f = new File(dir);
    if (!f.isDirectory() && !f.mkdirs()) {
      throw new DBException("RocksDBClient: cannot create rocksdb.dir " + dir);
    }
    boolean directIo = Boolean.parseBoolean(p.getProperty("rocksdb.directio", "false"));
    long cacheSize = Long.parseLong(p.getProperty("rocksdb.blockcachesize", "8388608"));
    long writeBuffer = Long.parseLong(p.getProperty("rocksdb.writebuffersize", "67108864"));
    blockCache = new LRUCache(cacheSize);
    cfOptions = new ColumnFamilyOptions()
        .setWriteBufferSize(writeBuffer)
        .setTableFormatConfig(new BlockBasedTableConfig().setBlockCache(blockCache));
    int cores = Runtime.getRuntime().availableProcessors();
    dbOptions = new DBOptions()
        .setCreateIfMissing(true)
        .setCreateMissingColumnFamilies(true)
        .setIncreaseParallelism(Math.max(1, cores))
        .setMaxBackgroundJobs(Math.max(2, cores))
        .setUseDirectReads(directIo)
        .setUseDirectIoForFlushAndCompaction(directIo);
    writeOptions = new WriteOptions()
        .setSync(Boolean.parseBoolean(p.getProperty("rocksdb.sync", "false")))
        .setDisableWAL(Boolean.parseBoolean(p.getProperty("rocksdb.disablewal", "false")));
    try {
      List<byte[]> names;
      try (Options o = new Options()) {
        names = RocksDB.listColumnFamilies(o, dir);
      }
      List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
      descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions));
      for (byte[] name : names) {
        if (!new String(name, StandardCharsets.UTF_8).equals("default")) {
          descriptors.add(new ColumnFamilyDescriptor(name, cfOptions));
        }
      }
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      rocksDb = RocksDB.open(dbOptions, dir, descriptors, handles);
      for (int i = 0; i < descriptors.size(); i++) {
        FAMILIES.put(new String(descriptors.get(i).getName(), StandardCharsets.UTF_8), handles.get(i));
      }
      openDir = dir;
    } catch (RocksDBException e) {
      closeAll();
      throw new DBException("RocksDBClient: cannot open " + dir + ": " + e.getMessage(), e);
    }
  }

  private static void closeAll() {
    for (ColumnFamilyHandle h : FAMILIES.values()) {
      h.close();
    }
    FAMILIES.clear();
    if (rocksDb != null) {
      try {
        rocksDb.syncWal();
      } catch (RocksDBException e) {
        System.err.println("RocksDBClient: syncWal failed: " + e.getMessage());
      }
      rocksDb.close();
      rocksDb = null;
    }
    for (AutoCloseable c : new AutoCloseable[] {writeOptions, dbOptions, cfOptions, blockCache}) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception e) {
          System.err.println("RocksDBClient: close failed: " + e.getMessage());
        }
      }
    }
    writeOptions = null;
    dbOptions = null;
    cfOptions = null;
    blockCache = null;
    openDir = null;
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      if (references <= 0) {
        return;
      }
      references--;
      if (references == 0) {
        closeAll();
      }
    }
  }

  private static ColumnFamilyHandle family(String table) throws RocksDBException {
    synchronized (LOCK) {
      ColumnFamilyHandle h = FAMILIES.get(table);
      if (h == null) {
        h = rocksDb.createColumnFamily(
            new ColumnFamilyDescriptor(table.getBytes(StandardCharsets.UTF_8), cfOptions));
        FAMILIES.put(table, h);
      }
      return h;
    }
  }

  static byte[] serialise(Map<String, ByteIterator> values) {
    List<byte[]> parts = new ArrayList<>(values.size() * 2);
    int size = 0;
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
      byte[] value = e.getValue().toArray();
      parts.add(name);
      parts.add(value);
      size += 8 + name.length + value.length;
    }
    ByteBuffer buf = ByteBuffer.allocate(size);
    for (byte[] part : parts) {
      buf.putInt(part.length);
      buf.put(part);
    }
    return buf.array();
  }

  static void deserialise(byte[] data, Set<String> fields, Map<String, ByteIterator> result) {
    ByteBuffer buf = ByteBuffer.wrap(data);
    while (buf.remaining() > 0) {
      byte[] name = new byte[buf.getInt()];
      buf.get(name);
      int len = buf.getInt();
      String field = new String(name, StandardCharsets.UTF_8);
      if (fields == null || fields.contains(field)) {
        result.put(field, new ByteArrayByteIterator(data, buf.position(), len));
      }
      buf.position(buf.position() + len);
    }
  }

  private static byte[] key(String key) {
    return key.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      byte[] value = rocksDb.get(family(table), key(key));
      if (value == null) {
        return Status.NOT_FOUND;
      }
      deserialise(value, fields, result);
      return Status.OK;
    } catch (RocksDBException e) {
      ErrorLog.log("RocksDBClient read", e);
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try (RocksIterator it = rocksDb.newIterator(family(table))) {
      int n = 0;
      for (it.seek(key(startkey)); it.isValid() && n < recordcount; it.next(), n++) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        deserialise(it.value(), fields, row);
        result.add(row);
      }
      it.status();
      return Status.OK;
    } catch (RocksDBException e) {
      ErrorLog.log("RocksDBClient scan", e);
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      ColumnFamilyHandle cf = family(table);
      byte[] old = rocksDb.get(cf, key(key));
      if (old == null) {
        return Status.NOT_FOUND;
      }
      Map<String, ByteIterator> merged = new HashMap<>();
      deserialise(old, null, merged);
      merged.putAll(values);
      rocksDb.put(cf, writeOptions, key(key), serialise(merged));
      return Status.OK;
    } catch (RocksDBException e) {
      ErrorLog.log("RocksDBClient update", e);
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      rocksDb.put(family(table), writeOptions, key(key), serialise(values));
      return Status.OK;
    } catch (RocksDBException e) {
      ErrorLog.log("RocksDBClient insert", e);
      return Status.ERROR;
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      rocksDb.delete(family(table), writeOptions, key(key));
      return Status.OK;
    } catch (RocksDBException e) {
      ErrorLog.log("RocksDBClient delete", e);
      return Status.ERROR;
    }
  }
}
