/* The network of an MGK model: records as nodes, tensor ids as edges, with
 * shapes checked to chain and the quantisation of every tensor, and its
 * export to ONNX. Built from a parsed npk_mgk_model (npukit/mgk.h); see
 * docs/mgk.md "Graph" and "ONNX export" for the semantics and their evidence. */
#ifndef NPUKIT_MGK_GRAPH_H
#define NPUKIT_MGK_GRAPH_H

#include "npukit/mgk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a tensor's scale comes from. */
typedef enum npk_mgk_qsrc {
    NPK_MGK_Q_NONE = 0, /* float tensor: not quantised */
    NPK_MGK_Q_FILE,     /* stored in a record or table */
    NPK_MGK_Q_DERIVED,  /* computed from stored values (Add arithmetic) */
    NPK_MGK_Q_CODE      /* not in the file: 1.0 (values in code units) */
} npk_mgk_qsrc;

typedef struct npk_mgk_gtensor {
    int32_t id;
    int producer;  /* record index, or -1 for a graph input */
    int out_index; /* which output of the producer */
    npk_mgk_str name, format, type;
    int32_t shape[NPK_MGK_MAX_RANK]; /* as stored (NHWC or NDHWC32) */
    uint32_t rank;
    int32_t lshape[NPK_MGK_MAX_RANK]; /* logical NHWC, real channels last */
    uint32_t lrank;
    bool is_float;
    bool has_zp;
    int32_t zp;
    double scale; /* 1.0 for float tensors and NPK_MGK_Q_CODE */
    npk_mgk_qsrc scale_src;
    uint32_t nconsumers;
    bool graph_input, graph_output;
} npk_mgk_gtensor;

/* One record as a node. */
typedef struct npk_mgk_gnode {
    size_t record;
    npk_mgk_kind kind;
    uint32_t nin, nout;
    int in[NPK_MGK_MAX_INPUTS]; /* tensor indices */
    int out[NPK_MGK_MAX_TB];
    const char *op;   /* the operation it performs, e.g. "Conv+PRelu", "Reshape" */
    bool established; /* semantics known well enough to export */
    char note[160];   /* detail (geometry) or why the semantics are not established */
} npk_mgk_gnode;

typedef struct npk_mgk_graph {
    npk_mgk_gtensor *tensors;
    size_t ntensors;
    npk_mgk_gnode *nodes; /* in topological order */
    size_t nnodes;
    npk_mgk_warning warnings[NPK_MGK_MAX_WARNINGS];
    size_t nwarnings;
} npk_mgk_graph;

/* Build and check the graph. Inconsistent tensor ids, shapes that do not
 * chain and unusable GRU data are errors naming the record and its offset. */
npk_status npk_mgk_graph_build(const npk_mgk_model *m, npk_mgk_graph *g, npk_error *err);
void npk_mgk_graph_free(npk_mgk_graph *g);

/* ONNX export (protobuf written by libprotobuf-c; NPK_E_UNSUPPORTED in builds
 * without it). */
typedef struct npk_mgk_onnx_opts {
    bool qdq;           /* int8 weights with DequantizeLinear, activations with Q/DQ pairs */
    bool allow_unknown; /* records of unknown semantics become custom-domain nodes */
} npk_mgk_onnx_opts;

bool npk_mgk_onnx_available(void);
npk_status npk_mgk_export_onnx(const npk_mgk_model *m, const npk_mgk_onnx_opts *opts, uint8_t **out,
                               size_t *len, npk_error *err);

#ifdef __cplusplus
}
#endif
#endif
