// go_driverbench: DriverBench's single- and multi-document tasks with the Go driver
// (go.mongodb.org/mongo-driver v1.17), the Go peer of bench/client_driverbench.cpp. Same tasks,
// options and output as that program (see its top comment); scripts/bench-client.sh runs it.
//
//	go_driverbench --uri URI [--task NAME[,NAME...]|all] [--count N] [--large-count L]
//	               [--iterations K] [--warmup W] [--threads T] [--data DIR] [--json]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// The specification's sizes, in bytes, of one operation's document.
const (
	helloBytes = 13
	tweetBytes = 1622
	smallBytes = 275
	largeBytes = 2731089
)

type task struct {
	name    string
	opBytes float64
	ops     int
	setup   func()
	before  func()
	run     func() int64
}

var ctx = context.Background()

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "go_driverbench: "+format+"\n", args...)
	os.Exit(1)
}

func readDoc(path string) bson.D {
	text, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	var d bson.D
	if err := bson.UnmarshalExtJSON(text, false, &d); err != nil {
		fail("%s: %v", path, err)
	}
	return d
}

func cpuSeconds() float64 {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return float64(u.Utime.Sec+u.Stime.Sec) + float64(u.Utime.Usec+u.Stime.Usec)/1e6
}

// The system (kernel) part of cpuSeconds.
func sysSeconds() float64 {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return float64(u.Stime.Sec) + float64(u.Stime.Usec)/1e6
}

func median(v []float64) float64 {
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func main() {
	uri := flag.String("uri", os.Getenv("MONGODB_URI"), "connection string")
	taskList := flag.String("task", "all", "tasks, comma-separated, or all")
	data := flag.String("data", "build/spec-data/driverbench/single_and_multi_document", "data directory (scripts/spec-data.sh fetches it)")
	count := flag.Int("count", 10000, "operations per task")
	largeCount := flag.Int("large-count", 10, "operations of the large-document tasks")
	iterations := flag.Int("iterations", 10, "timed iterations")
	warmup := flag.Int("warmup", 1, "untimed iterations first")
	threads := flag.Int("threads", 1, "threads sharing the client")
	asJSON := flag.Bool("json", false, "one JSON object per line")
	flag.Parse()
	if *uri == "" {
		fmt.Fprintln(os.Stderr, "go_driverbench: --uri (or MONGODB_URI) is needed")
		os.Exit(2)
	}

	client, err := mongo.Connect(ctx, options.Client().ApplyURI(*uri))
	if err != nil {
		fail("connect: %v", err)
	}
	defer client.Disconnect(ctx)
	db := client.Database("perftest")
	coll := db.Collection("corpus")

	tweet := readDoc(*data + "/tweet.json")
	small := readDoc(*data + "/small_doc.json")
	large := readDoc(*data + "/large_doc.json")
	hello := bson.D{{Key: "hello", Value: true}}

	dropDatabase := func() {
		if err := db.Drop(ctx); err != nil {
			fail("dropDatabase: %v", err)
		}
	}
	recreate := func() {
		if err := coll.Drop(ctx); err != nil {
			fail("drop: %v", err)
		}
		if err := db.CreateCollection(ctx, "corpus"); err != nil {
			fail("create: %v", err)
		}
	}
	loadTweets := func(n int, numbered bool) {
		dropDatabase()
		docs := make([]any, n)
		for i := range docs {
			if numbered {
				d := bson.D{{Key: "_id", Value: int32(i + 1)}}
				for _, e := range tweet {
					if e.Key != "_id" {
						d = append(d, e)
					}
				}
				docs[i] = d
			} else {
				docs[i] = tweet
			}
		}
		res, err := coll.InsertMany(ctx, docs)
		if err != nil || len(res.InsertedIDs) != n {
			fail("setup: insert tweets: %v", err)
		}
	}
	runCommand := func(n int) int64 {
		for i := 0; i < n; i++ {
			var reply bson.Raw
			if err := db.RunCommand(ctx, hello).Decode(&reply); err != nil {
				fail("hello: %v", err)
			}
		}
		return int64(n)
	}
	findOne := func(n int) int64 {
		var found int64
		for i := 1; i <= n; i++ {
			var doc bson.Raw
			if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: int32(i)}}).Decode(&doc); err != nil {
				fail("find one: %v", err)
			}
			found++
		}
		return found
	}
	insertOne := func(doc bson.D, n int) int64 {
		var acked int64
		for i := 0; i < n; i++ {
			if _, err := coll.InsertOne(ctx, doc); err != nil {
				fail("insert one: %v", err)
			}
			acked++
		}
		return acked
	}
	insertMany := func(doc bson.D, n int) int64 {
		docs := make([]any, n)
		for i := range docs {
			docs[i] = doc
		}
		res, err := coll.InsertMany(ctx, docs)
		if err != nil {
			fail("insert many: %v", err)
		}
		return int64(len(res.InsertedIDs))
	}
	findMany := func() int64 {
		cur, err := coll.Find(ctx, bson.D{})
		if err != nil {
			fail("find many: %v", err)
		}
		defer cur.Close(ctx)
		var read int64
		for cur.Next(ctx) {
			_ = cur.Current
			read++
		}
		if err := cur.Err(); err != nil {
			fail("find many: next: %v", err)
		}
		return read
	}

	n, l := *count, *largeCount
	nothing := func() {}
	tasks := []task{
		{"run_command", helloBytes, n, nothing, nothing, func() int64 { return runCommand(n) }},
		{"find_one", tweetBytes, n, func() { loadTweets(n, true) }, nothing, func() int64 { return findOne(n) }},
		{"insert_one_small", smallBytes, n, dropDatabase, recreate, func() int64 { return insertOne(small, n) }},
		{"insert_one_large", largeBytes, l, dropDatabase, recreate, func() int64 { return insertOne(large, l) }},
		{"find_many", tweetBytes, n, func() { loadTweets(n, false) }, nothing, findMany},
		{"insert_many_small", smallBytes, n, dropDatabase, recreate, func() int64 { return insertMany(small, n) }},
		{"insert_many_large", largeBytes, l, dropDatabase, recreate, func() int64 { return insertMany(large, l) }},
	}

	chosen := []task{}
	wanted := "," + *taskList + ","
	for _, t := range tasks {
		if *taskList == "all" || strings.Contains(wanted, ","+t.name+",") {
			chosen = append(chosen, t)
		}
	}
	if len(chosen) == 0 || (*taskList != "all" && len(chosen) != strings.Count(*taskList, ",")+1) {
		fmt.Fprintf(os.Stderr, "go_driverbench: unknown task in %q\n", *taskList)
		os.Exit(2)
	}

	for _, t := range chosen {
		t.setup()
		var walls, cpus, syss []float64
		var docs int64
		for i := 0; i < *warmup+*iterations; i++ {
			t.before()
			cpu0, sys0 := cpuSeconds(), sysSeconds()
			t0 := time.Now()
			if *threads == 1 {
				docs = t.run()
			} else {
				var wg sync.WaitGroup
				per := make([]int64, *threads)
				for k := range per {
					wg.Add(1)
					go func(k int) { defer wg.Done(); per[k] = t.run() }(k)
				}
				wg.Wait()
				docs = 0
				for _, d := range per {
					docs += d
				}
			}
			wall := time.Since(t0).Seconds()
			cpu, sys := cpuSeconds()-cpu0, sysSeconds()-sys0
			if i >= *warmup {
				walls = append(walls, wall)
				cpus = append(cpus, cpu)
				syss = append(syss, sys)
			}
		}
		wall := median(walls)
		totalOps := float64(t.ops * *threads)
		mb := t.opBytes * totalOps / 1e6
		cpuUs := median(cpus) / totalOps * 1e6
		// The median iteration's CPU time, split as all the timed iterations' time splits (the
		// kernel counts user and system time by its clock's ticks: see client_driverbench.cpp).
		cpuSum, sysSum := 0.0, 0.0
		for k := range cpus {
			cpuSum += cpus[k]
			sysSum += syss[k]
		}
		sysUs := 0.0
		if cpuSum > 0 {
			sysUs = cpuUs * sysSum / cpuSum
		}
		if *asJSON {
			fmt.Printf(`{"client": "go", "task": "%s", "threads": %d, "ops": %d, "iterations": %d, `+
				`"mb": %.6f, "wall_s": %.6f, "mbps": %.3f, "cpu_us_per_op": %.3f, "sys_us_per_op": %.3f, `+
				`"docs": %d}`+"\n",
				t.name, *threads, t.ops, *iterations, mb, wall, mb/wall, cpuUs, sysUs, docs)
		} else {
			fmt.Printf("%-18s %8.2f MB/s  wall %9.4f s  cpu %9.2f us/op  (%d ops x %d threads, median of %d, %d docs)\n",
				t.name, mb/wall, wall, cpuUs, t.ops, *threads, *iterations, docs)
		}
	}
}
