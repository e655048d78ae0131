package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Readable in one screen: issue 20 found the profile languages' longest
// functions at 219 lines and a cyclomatic complexity of 86
// (Suite.casePoints), and ten more past 80 lines or 25.
const (
	maxFunctionLines      = 80
	maxFunctionComplexity = 25
)

// readabilityExceptions are the functions of profiles/... allowed past the
// limits, each with why: none now.
var readabilityExceptions = map[string]string{}

// TestProfilesFunctionsStayReadable: no function of the profile languages
// (tests aside) is longer than maxFunctionLines or more complex than
// maxFunctionComplexity, counted as gocyclo does (1, plus one for each if,
// for, range, case, select case, && and ||), but the exceptions.
func TestProfilesFunctionsStayReadable(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(filepath.Join("..", "profiles"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			checked++
			name := funcName(fn)
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			cc := cyclomatic(fn)
			if (lines > maxFunctionLines || cc > maxFunctionComplexity) && readabilityExceptions[name] == "" {
				t.Errorf("%s: %s is %d lines at cyclomatic complexity %d (at most %d and %d)", fset.Position(fn.Pos()), name, lines, cc, maxFunctionLines, maxFunctionComplexity)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d functions found below ../profiles", checked)
	}
}

// funcName is Type.Method or Func.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// cyclomatic counts as gocyclo: the function literals inside a function
// are its own.
func cyclomatic(fn *ast.FuncDecl) int {
	n := 1
	ast.Inspect(fn.Body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}
